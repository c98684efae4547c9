import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A 4,096-token window; like vLLM, a reply may only use what the window has left.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({ models: [{ id: "small", maxModelLen: 4096 }] });
});

import { eq } from "drizzle-orm";
import { listCompactionEvents } from "@/lib/db/queries/compaction-events";
import { loadHistory } from "@/lib/db/queries/messages";
import { chat as chatTable } from "@/lib/db/schema";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { whileInsertsRefused } from "../../helpers/db";
import { longMessage, newChat, sendTurn } from "../../helpers/turns";

const MODEL = "fake:small";
const RAMBLING = "word ".repeat(4000);

afterAll(() => fake.close());
beforeEach(() => fake.reset());

type Part = { type: string; text?: string; output?: { outcome?: string; reason?: string } };

describeEachDriver("a reply the window cuts short", (use) => {
  it("is not kept as the answer: the turn trims, answers again once, and the chat compacts next turn", async () => {
    const database = use();
    const { browser } = await register(database, "length@example.com");
    const chatId = await newChat(database, browser);
    for (let turn = 0; turn < 3; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn, 380) });
    }

    // The next reply runs into the end of the window; the retry answers normally.
    fake.script({ text: RAMBLING });
    const { chunks } = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "Tell me everything.",
    });
    expect(chunks.some((c) => c.type === "error")).toBe(false);
    expect(chunks.some((c) => c.type === "data-fold-retry")).toBe(true);
    // Exactly one retry: the cut-short request and the answered one.
    const answered = fake.requests.filter((r) => r.status === 200);
    expect(answered.slice(-2).map((r) => r.messages.at(-1)?.content)).toEqual([
      "Tell me everything.",
      "Tell me everything.",
    ]);

    const history = await loadHistory(database.db, chatId);
    const reply = history.at(-1);
    const parts = reply?.parts as Part[];
    const text = parts
      .filter((p) => p.type === "text")
      .map((p) => p.text)
      .join("");
    expect(text).toContain("Fake reply to: Tell me everything.");
    expect(text).not.toContain("word word word");
    expect(parts.some((p) => p.type === "data-fold-retry")).toBe(false);
    const trace = parts.find((p) => p.type === "tool-compact_context");
    expect(trace?.output).toMatchObject({ outcome: "trimmed", reason: "length" });
    const metadata = reply?.metadata as { stats: { finishReason: string } } | undefined;
    expect(metadata?.stats.finishReason).toBe("stop");

    const [row] = await database.db.select().from(chatTable).where(eq(chatTable.id, chatId));
    expect(row?.compactionDirty).toBe(true);
    const events = await listCompactionEvents(database.db, chatId);
    expect(events[0]).toMatchObject({ reason: "length" });

    // The next turn compacts durably, and says why.
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Thanks." });
    const after = await listCompactionEvents(database.db, chatId);
    expect(after[0]).toMatchObject({ reason: "length", outcome: "summarized" });
    const [settled] = await database.db.select().from(chatTable).where(eq(chatTable.id, chatId));
    expect(settled?.compactionDirty).toBe(false);
  });

  it("retries even when recording the recovery fails: bookkeeping never costs the answer", async () => {
    const database = use();
    const { browser } = await register(database, "length-unrecorded@example.com");
    const chatId = await newChat(database, browser);
    for (let turn = 0; turn < 3; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn, 380) });
    }
    fake.script({ text: RAMBLING });
    let chunks: Awaited<ReturnType<typeof sendTurn>>["chunks"] = [];
    await whileInsertsRefused(database.db, "compaction_event", "true", async () => {
      ({ chunks } = await sendTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: "Tell me everything.",
      }));
    });
    expect(chunks.some((c) => c.type === "error")).toBe(false);
    expect(chunks.some((c) => c.type === "data-fold-retry")).toBe(true);
    const reply = (await loadHistory(database.db, chatId)).at(-1);
    expect(reply?.role).toBe("assistant");
    const text = ((reply?.parts ?? []) as Part[])
      .filter((p) => p.type === "text")
      .map((p) => p.text)
      .join("");
    expect(text).toContain("Fake reply to: Tell me everything.");
  });

  it("a reply cut short again after the retry ends in the clear message, and nothing half-written is stored", async () => {
    const database = use();
    const { browser } = await register(database, "length2@example.com");
    const chatId = await newChat(database, browser);
    fake.script({ text: RAMBLING }, { text: RAMBLING });
    const { chunks } = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: longMessage(1, 200),
    });
    const error = chunks.find((c) => c.type === "error") as { errorText?: string } | undefined;
    expect(error?.errorText).toBe(
      `This conversation no longer fits ${MODEL} — compact it or start a new chat.`,
    );
    const history = await loadHistory(database.db, chatId);
    expect(history.map((m) => m.role)).toEqual(["user"]);
  });
});
