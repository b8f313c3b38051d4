-- Custom SQL migration file, put your code below! --
-- Full-text search over templates (spec/server.md §2, §7). Hand-written: drizzle's schema language
-- has no FTS5 virtual tables. rowid = templates.id. The prefix index ('2 3') keeps short prefix
-- queries fast; server/src/store/swap-index.ts writes the rows, the trigger removes them with
-- their template (also when a registry is deleted and its templates cascade).
CREATE VIRTUAL TABLE `templates_fts` USING fts5(`name`, `collection`, `title`, `description`, `properties`, tokenize = 'unicode61', prefix = '2 3');
--> statement-breakpoint
CREATE TRIGGER `templates_fts_delete` AFTER DELETE ON `templates` BEGIN DELETE FROM `templates_fts` WHERE rowid = old.id; END;
