ALTER TABLE "tokens" ADD COLUMN "expires_at" bigint;--> statement-breakpoint
ALTER TABLE "tokens" ADD COLUMN "last_used_at" bigint;