ALTER TABLE `registries` ADD `organisation` text;--> statement-breakpoint
ALTER TABLE `tokens` ADD `organisations` text;