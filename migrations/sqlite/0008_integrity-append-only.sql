-- Custom SQL migration file, put your code below! --
-- The checksum log never forgets (docs/integrity-store.md §1): first_seen, log_hashes and
-- log_checkpoints refuse UPDATE and DELETE; log_state starts with its one row at size 0.
CREATE TRIGGER `first_seen_no_update` BEFORE UPDATE ON `first_seen` BEGIN SELECT RAISE(ABORT, 'first_seen is append-only'); END;
--> statement-breakpoint
CREATE TRIGGER `first_seen_no_delete` BEFORE DELETE ON `first_seen` BEGIN SELECT RAISE(ABORT, 'first_seen is append-only'); END;
--> statement-breakpoint
CREATE TRIGGER `log_hashes_no_update` BEFORE UPDATE ON `log_hashes` BEGIN SELECT RAISE(ABORT, 'log_hashes is append-only'); END;
--> statement-breakpoint
CREATE TRIGGER `log_hashes_no_delete` BEFORE DELETE ON `log_hashes` BEGIN SELECT RAISE(ABORT, 'log_hashes is append-only'); END;
--> statement-breakpoint
CREATE TRIGGER `log_checkpoints_no_update` BEFORE UPDATE ON `log_checkpoints` BEGIN SELECT RAISE(ABORT, 'log_checkpoints is append-only'); END;
--> statement-breakpoint
CREATE TRIGGER `log_checkpoints_no_delete` BEFORE DELETE ON `log_checkpoints` BEGIN SELECT RAISE(ABORT, 'log_checkpoints is append-only'); END;
--> statement-breakpoint
INSERT INTO `log_state` (`id`, `size`) VALUES (1, 0);
