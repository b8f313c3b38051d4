ALTER TABLE "registries" ADD COLUMN "organisation" text;--> statement-breakpoint
ALTER TABLE "tokens" ADD COLUMN "organisations" text;