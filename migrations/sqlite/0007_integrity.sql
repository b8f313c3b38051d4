CREATE TABLE `first_seen` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`template` text NOT NULL,
	`version` text NOT NULL,
	`digest` text NOT NULL,
	`supersedes` text,
	`log_index` integer NOT NULL,
	`registry_id` integer NOT NULL,
	`sync_id` integer,
	`seen_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `first_seen_log_index_unique` ON `first_seen` (`log_index`);--> statement-breakpoint
CREATE INDEX `first_seen_key_idx` ON `first_seen` (`template`,`version`,`id`);--> statement-breakpoint
CREATE TABLE `log_checkpoints` (
	`size` integer PRIMARY KEY NOT NULL,
	`root` text NOT NULL,
	`note` text NOT NULL,
	`signed_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `log_hashes` (
	`level` integer NOT NULL,
	`idx` integer NOT NULL,
	`hash` blob NOT NULL,
	PRIMARY KEY(`level`, `idx`)
);
--> statement-breakpoint
CREATE TABLE `log_state` (
	`id` integer PRIMARY KEY NOT NULL,
	`size` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `quarantines` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`registry_id` integer NOT NULL,
	`template` text NOT NULL,
	`version` text NOT NULL,
	`first_digest` text NOT NULL,
	`new_digest` text NOT NULL,
	`changed_files` text NOT NULL,
	`tree_sha` text,
	`since` integer NOT NULL,
	`notified_at` integer,
	`accepted_at` integer,
	`accepted_by` text,
	`reason` text
);
--> statement-breakpoint
CREATE INDEX `quarantines_key_idx` ON `quarantines` (`template`,`version`);--> statement-breakpoint
CREATE INDEX `quarantines_registry_idx` ON `quarantines` (`registry_id`);--> statement-breakpoint
ALTER TABLE `versions` ADD `tree_sha` text;