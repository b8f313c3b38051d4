-- Custom SQL migration file, put your code below! --
-- Text is compared as bytes (docs/server.md, "Text is compared as bytes"): the columns that SQL
-- written once for both dialects ranges over or orders by compare in the "C" collation, as SQLite's
-- BINARY does, whatever locale the database was created with (en_US.UTF-8 ignores '/' and puts
-- '0' before letters: the first-seen range of a registry matched nothing). Their indexes are
-- rebuilt with the column. templates.name and .collection feed the generated search column and
-- cannot change type: every query orders them with an explicit COLLATE "C".
ALTER TABLE "first_seen" ALTER COLUMN "template" TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE "first_seen" ALTER COLUMN "version" TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE "quarantines" ALTER COLUMN "template" TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE "quarantines" ALTER COLUMN "version" TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE "versions" ALTER COLUMN "version" TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE "version_files" ALTER COLUMN "path" TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE "findings" ALTER COLUMN "path" TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE "findings" ALTER COLUMN "code" TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE "registries" ALTER COLUMN "name" TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE "credentials" ALTER COLUMN "name" TYPE text COLLATE "C";
