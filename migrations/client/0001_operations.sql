CREATE TABLE `manager_tokens` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`hash` text NOT NULL,
	`role` text NOT NULL,
	`scopes` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `manager_tokens_hash_unique` ON `manager_tokens` (`hash`);--> statement-breakpoint
CREATE TABLE `operations` (
	`id` text PRIMARY KEY NOT NULL,
	`deployment` text NOT NULL,
	`action` text NOT NULL,
	`status` text NOT NULL,
	`actor` text NOT NULL,
	`cluster` text NOT NULL,
	`namespace` text NOT NULL,
	`manifest` text,
	`previous_manifest` text,
	`errors` text DEFAULT '[]' NOT NULL,
	`error` text,
	`created_at` integer NOT NULL,
	`started_at` integer,
	`finished_at` integer
);
--> statement-breakpoint
CREATE INDEX `operations_deployment` ON `operations` (`deployment`,`created_at`);