CREATE TABLE "message_branch" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"chat_id" uuid NOT NULL,
	"anchor_id" text NOT NULL,
	"position" integer NOT NULL,
	"active" boolean DEFAULT false NOT NULL,
	"messages" jsonb,
	"summary" text,
	"watermark" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "message_branch" ADD CONSTRAINT "message_branch_chat_id_chat_id_fk" FOREIGN KEY ("chat_id") REFERENCES "public"."chat"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "message_branch_anchor_position_idx" ON "message_branch" USING btree ("chat_id","anchor_id","position");