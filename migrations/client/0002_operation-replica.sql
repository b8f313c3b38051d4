ALTER TABLE `operations` ADD `replica` text;--> statement-breakpoint
ALTER TABLE `operations` ADD `heartbeat_at` integer;