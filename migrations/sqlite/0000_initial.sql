CREATE TABLE `credentials` (
	`name` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`secret` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `files` (
	`sha256` text PRIMARY KEY NOT NULL,
	`git_sha` text NOT NULL,
	`size` integer NOT NULL,
	`content` blob NOT NULL
);
--> statement-breakpoint
CREATE INDEX `files_git_sha_idx` ON `files` (`git_sha`);--> statement-breakpoint
CREATE TABLE `findings` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`registry_id` integer NOT NULL,
	`code` text NOT NULL,
	`severity` text NOT NULL,
	`path` text NOT NULL,
	`message` text NOT NULL,
	FOREIGN KEY (`registry_id`) REFERENCES `registries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `findings_registry_idx` ON `findings` (`registry_id`);--> statement-breakpoint
CREATE TABLE `registries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`source_type` text NOT NULL,
	`source` text NOT NULL,
	`branch` text,
	`path` text DEFAULT '' NOT NULL,
	`interval_seconds` integer,
	`visibility` text DEFAULT 'public' NOT NULL,
	`credential` text,
	`webhook_secret` text,
	`commit` text,
	`etag` text,
	`registry_yaml_sha256` text,
	`generation` integer DEFAULT 0 NOT NULL,
	`last_sync_at` integer,
	`last_sync_status` text DEFAULT 'never' NOT NULL,
	`last_sync_error` text,
	`template_count` integer DEFAULT 0 NOT NULL,
	`version_count` integer DEFAULT 0 NOT NULL,
	`finding_count` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `registries_name_unique` ON `registries` (`name`);--> statement-breakpoint
CREATE TABLE `syncs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`registry_id` integer NOT NULL,
	`trigger` text NOT NULL,
	`status` text NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`commit` text,
	`api_requests` integer DEFAULT 0 NOT NULL,
	`rate_limit_remaining` integer,
	`error` text,
	FOREIGN KEY (`registry_id`) REFERENCES `registries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `syncs_registry_idx` ON `syncs` (`registry_id`,`id`);--> statement-breakpoint
CREATE TABLE `templates` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`registry_id` integer NOT NULL,
	`collection` text NOT NULL,
	`name` text NOT NULL,
	`latest_version` text,
	`title` text,
	`description` text,
	FOREIGN KEY (`registry_id`) REFERENCES `registries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `templates_name_idx` ON `templates` (`registry_id`,`collection`,`name`);--> statement-breakpoint
CREATE INDEX `templates_plain_name_idx` ON `templates` (`name`);--> statement-breakpoint
CREATE TABLE `tokens` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`hash` text NOT NULL,
	`role` text NOT NULL,
	`registry_id` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`registry_id`) REFERENCES `registries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tokens_hash_unique` ON `tokens` (`hash`);--> statement-breakpoint
CREATE INDEX `tokens_registry_idx` ON `tokens` (`registry_id`);--> statement-breakpoint
CREATE TABLE `version_files` (
	`version_id` integer NOT NULL,
	`path` text NOT NULL,
	`sha256` text NOT NULL,
	`size` integer NOT NULL,
	PRIMARY KEY(`version_id`, `path`),
	FOREIGN KEY (`version_id`) REFERENCES `versions`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`sha256`) REFERENCES `files`(`sha256`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `version_files_sha_idx` ON `version_files` (`sha256`);--> statement-breakpoint
CREATE TABLE `versions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`template_id` integer NOT NULL,
	`registry_id` integer NOT NULL,
	`version` text NOT NULL,
	`kind` text NOT NULL,
	`dir` text NOT NULL,
	`template_file` text NOT NULL,
	`schema_file` text,
	`has_example` integer NOT NULL,
	`digest` text NOT NULL,
	`schema_json` text,
	FOREIGN KEY (`template_id`) REFERENCES `templates`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `versions_template_idx` ON `versions` (`template_id`,`version`);