import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { invalidateFrom } from "@/lib/chat/invalidate";
import { USER_NOTES_HEADING } from "@/lib/compaction/user-notes";
import type { Db } from "@/lib/db/client";
import { casCompactionState } from "@/lib/db/compaction-state";
import { getChat } from "@/lib/db/queries/chats";
import { recordCompactionEvent } from "@/lib/db/queries/compaction-events";
import { appendMessage } from "@/lib/db/queries/messages";
import { type CompactionEvent, compactionEvent } from "@/lib/db/schema";
import { describeEachDriver } from "../../helpers/databases";
import { seedChat } from "../../helpers/fixtures";

/** A chat of `count` messages m0… (user, assistant, …); its id. */
async function chatOf(db: Db, count: number): Promise<string> {
  const chat = await seedChat(db);
  for (let i = 0; i < count; i++) {
    await appendMessage(db, chat.id, {
      id: `${chat.id}-m${i}`,
      role: i % 2 === 0 ? "user" : "assistant",
      parts: [{ type: "text", text: `message ${i}` }],
      metadata: null,
    });
  }
  return chat.id;
}

describeEachDriver("the user's notes through rollbacks", (use) => {
  it("a note an earlier rollback kept stays when a digest since holds it; the digest's own line under that heading does not", async () => {
    const { db } = use();
    const chatId = await chatOf(db, 8);
    // Written a minute apart, in the order given.
    const event = async (
      minute: number,
      fields: Pick<CompactionEvent, "reason" | "outcome" | "summary" | "watermarkTo">,
    ) => {
      const row = await recordCompactionEvent(db, { chatId, messagesSummarized: 0, ...fields });
      await db
        .update(compactionEvent)
        .set({ createdAt: new Date(Date.UTC(2026, 10, 28, 10, minute)) })
        .where(eq(compactionEvent.id, row.id));
    };
    const first = "## Goal & open requests\n- Plan the trip.";
    const note = "- Budget: 500 euros.";
    // The first summary; a rollback to it that kept the user's note (the edit that held it is
    // gone with the messages it covered); then a digest that copied the note and wrote a line of
    // its own under the note's heading.
    await event(1, {
      reason: "threshold",
      outcome: "summarized",
      summary: first,
      watermarkTo: `${chatId}-m1`,
    });
    await event(2, {
      reason: "invalidated",
      outcome: "skipped",
      summary: `${first}\n\n${USER_NOTES_HEADING}\n${note}`,
      watermarkTo: `${chatId}-m1`,
    });
    const digest = `${first}\n## Errors & fixes\n${USER_NOTES_HEADING}\n${note}\n- web_search failed: 429`;
    await event(3, {
      reason: "threshold",
      outcome: "fallback",
      summary: digest,
      watermarkTo: `${chatId}-m5`,
    });
    const seen = await getChat(db, chatId);
    if (!seen) throw new Error("no chat");
    await casCompactionState(db, chatId, seen.version, {
      contextSummary: digest,
      summaryWatermark: `${chatId}-m5`,
    });

    // An edit of m3, inside the digest's span: back to the first summary, with the note.
    await invalidateFrom(db, chatId, 3);
    expect((await getChat(db, chatId))?.contextSummary).toBe(
      `${first}\n\n${USER_NOTES_HEADING}\n${note}`,
    );
  });
});
