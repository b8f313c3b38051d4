-- Custom SQL migration file, put your code below! --
-- The checksum log never forgets (docs/integrity-store.md §1): first_seen, log_hashes and
-- log_checkpoints refuse UPDATE and DELETE; log_state starts with its one row at size 0.
CREATE FUNCTION dm_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER first_seen_append_only BEFORE UPDATE OR DELETE ON first_seen FOR EACH ROW EXECUTE FUNCTION dm_append_only();
--> statement-breakpoint
CREATE TRIGGER log_hashes_append_only BEFORE UPDATE OR DELETE ON log_hashes FOR EACH ROW EXECUTE FUNCTION dm_append_only();
--> statement-breakpoint
CREATE TRIGGER log_checkpoints_append_only BEFORE UPDATE OR DELETE ON log_checkpoints FOR EACH ROW EXECUTE FUNCTION dm_append_only();
--> statement-breakpoint
INSERT INTO log_state (id, size) VALUES (1, 0);
