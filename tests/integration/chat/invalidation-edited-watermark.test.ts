import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { invalidateFrom } from "@/lib/chat/invalidate";
import { recordCompactionEvent } from "@/lib/db/queries/compaction-events";
import { chat, message } from "@/lib/db/schema";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { newChat } from "../../helpers/turns";

const text = (value: string) => [{ type: "text", text: value }];

describeEachDriver("rollback points after an edit in place", (use) => {
  it("a summary whose watermark is a message edited since is never rolled back to", async () => {
    const database = use();
    const { db } = database;
    const { browser } = await register(database, "edited-watermark@example.com");
    const chatId = await newChat(database, browser);
    const row = (seq: number, id: string, role: "user" | "assistant", value: string) => ({
      id,
      chatId,
      seq,
      role,
      parts: text(value),
    });
    await db
      .insert(message)
      .values([
        row(0, "u0", "user", "Plan a trip."),
        row(1, "a0", "assistant", "Where to?"),
        row(2, "u1", "user", "Use Python for the scripts."),
        row(3, "a1", "assistant", "A long reply about Python."),
      ]);
    // A fold whose watermark is the user's own message u1 (its reply was longer than the keep
    // window): the summary says Python.
    await recordCompactionEvent(db, {
      chatId,
      reason: "threshold",
      outcome: "summarized",
      watermarkTo: "a0",
      summary: "The user is planning a trip.",
      messagesSummarized: 2,
    });
    await recordCompactionEvent(db, {
      chatId,
      reason: "threshold",
      outcome: "summarized",
      watermarkTo: "u1",
      summary: "The user is planning a trip. Scripts: Python.",
      messagesSummarized: 3,
    });
    // u1 is edited in place (same id, new text); its reply and what followed are replaced.
    await db
      .update(message)
      .set({ parts: text("Use Rust for the scripts.") })
      .where(eq(message.id, "u1"));
    await db.delete(message).where(eq(message.id, "a1"));
    await db
      .insert(message)
      .values([
        row(3, "a1b", "assistant", "A reply about Rust."),
        row(4, "u2", "user", "And the packing list?"),
        row(5, "a2", "assistant", "Here it is."),
      ]);
    // A later fold past the edit, then an edit of u2: the rollback looks for a point before it.
    await db
      .update(chat)
      .set({ contextSummary: "Trip; Rust; packing.", summaryWatermark: "a2" })
      .where(eq(chat.id, chatId));
    await invalidateFrom(db, chatId, 4);

    const [after] = await db.select().from(chat).where(eq(chat.id, chatId));
    // Not the summary of u1's old text ("Python"): u1 as it is now would be neither summarized
    // nor sent. The summary from before u1 is still true.
    expect(after?.contextSummary).toBe("The user is planning a trip.");
    expect(after?.summaryWatermark).toBe("a0");
    expect(after?.compactionDirty).toBe(true);
  });
});
