-- Custom SQL migration file, put your code below! --
-- The search table gets the registry id (UNINDEXED) so that a search reads one table: the
-- candidate set is bounded and filtered by visibility without a join (spec/server.md §7).
-- Property names are not kept outside this table; rows rebuilt here get them on the next sync.
DROP TRIGGER IF EXISTS `templates_fts_delete`;
--> statement-breakpoint
DROP TABLE IF EXISTS `templates_fts`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `templates_fts` USING fts5(`name`, `collection`, `title`, `description`, `properties`, `registry_id` UNINDEXED, tokenize = 'unicode61', prefix = '2 3');
--> statement-breakpoint
INSERT INTO `templates_fts` (rowid, `name`, `collection`, `title`, `description`, `properties`, `registry_id`)
  SELECT `id`, `name`, `collection`, coalesce(`title`, ''), coalesce(`description`, ''), '', `registry_id` FROM `templates`;
--> statement-breakpoint
CREATE TRIGGER `templates_fts_delete` AFTER DELETE ON `templates` BEGIN DELETE FROM `templates_fts` WHERE rowid = old.id; END;
