CREATE TABLE `deployments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`state` text NOT NULL,
	`current_manifest` text,
	`last_good_manifest` text,
	`lock_owner` text,
	`locked_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `deployments_name_unique` ON `deployments` (`name`);--> statement-breakpoint
CREATE TABLE `manifest_resources` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`manifest` text NOT NULL,
	`action` text NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`api_version` text NOT NULL,
	`kind` text NOT NULL,
	`namespace` text NOT NULL,
	`object_name` text NOT NULL,
	`level` integer NOT NULL,
	`outcome` text NOT NULL,
	`message` text,
	`resource_version` text
);
--> statement-breakpoint
CREATE INDEX `manifest_resources_manifest` ON `manifest_resources` (`manifest`);--> statement-breakpoint
CREATE TABLE `manifests` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`deployment` text NOT NULL,
	`seq` integer NOT NULL,
	`action` text NOT NULL,
	`input_config` text NOT NULL,
	`expanded_config` text NOT NULL,
	`layout` text NOT NULL,
	`references` text NOT NULL,
	`resolved_values` text DEFAULT '[]' NOT NULL,
	`target` text NOT NULL,
	`status` text NOT NULL,
	`inventory` text DEFAULT '[]' NOT NULL,
	`error` text,
	`created_at` integer NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `manifests_name_unique` ON `manifests` (`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `manifests_deployment_seq` ON `manifests` (`deployment`,`seq`);--> statement-breakpoint
CREATE TABLE `type_instances` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`deployment` text NOT NULL,
	`manifest` text NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`path` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `type_instances_type` ON `type_instances` (`type`);--> statement-breakpoint
CREATE INDEX `type_instances_deployment` ON `type_instances` (`deployment`);