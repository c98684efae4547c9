ALTER TABLE "chat" ADD COLUMN "titled" boolean DEFAULT true NOT NULL;--> statement-breakpoint
-- Chats from before the flag: one that still shows a new chat's title ("New chat") is not named yet, as its text said until now.
UPDATE "chat" SET "titled" = false WHERE "title" = 'New chat';