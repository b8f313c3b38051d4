CREATE TABLE "sync_leases" (
	"registry_id" integer PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"expires_at" bigint NOT NULL,
	"pending" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
ALTER TABLE "sync_leases" ADD CONSTRAINT "sync_leases_registry_id_registries_id_fk" FOREIGN KEY ("registry_id") REFERENCES "public"."registries"("id") ON DELETE cascade ON UPDATE no action;