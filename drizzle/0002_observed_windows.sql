CREATE TABLE "model_observed_window" (
	"provider" text NOT NULL,
	"model" text NOT NULL,
	"context_window" integer NOT NULL,
	"sent_tokens" integer NOT NULL,
	"chain_window" integer NOT NULL,
	"chain_source" text NOT NULL,
	"chat_id" uuid,
	"observed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "model_observed_window_provider_model_pk" PRIMARY KEY("provider","model")
);
--> statement-breakpoint
ALTER TABLE "model_observed_window" ADD CONSTRAINT "model_observed_window_chat_id_chat_id_fk" FOREIGN KEY ("chat_id") REFERENCES "public"."chat"("id") ON DELETE set null ON UPDATE no action;