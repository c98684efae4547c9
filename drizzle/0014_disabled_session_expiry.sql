ALTER TABLE "disabled_session" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
-- Rows from before: their session ran out at the latest 30 days (SESSION_DAYS) after the disable.
UPDATE "disabled_session" SET "expires_at" = "created_at" + interval '30 days';--> statement-breakpoint
ALTER TABLE "disabled_session" ALTER COLUMN "expires_at" SET NOT NULL;
