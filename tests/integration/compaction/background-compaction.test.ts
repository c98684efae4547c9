import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible server with a 4,096-token window; it also answers as the summarizer.
const fake = await vi.hoisted(async () => {
  const { startFakeOpenAI } = await import("../../fixtures/fake-openai/server");
  const server = await startFakeOpenAI({
    models: [{ id: "small", maxModelLen: 4096 }],
    replyTokens: 120,
  });
  process.env.OPENAI_COMPATIBLE_BASE_URL = server.url;
  process.env.OPENAI_COMPATIBLE_NAME = "fake";
  process.env.DEMO_MODEL = "never";
  return server;
});

import * as contextRoute from "@/app/api/chats/[id]/context/route";
import { backgroundCompaction } from "@/lib/chat/background-compact";
import type { Database } from "@/lib/db/client";
import { listCompactionEvents } from "@/lib/db/queries/compaction-events";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { type Browser, call } from "../../helpers/http";
import { longMessage, newChat, sendTurn } from "../../helpers/turns";
import { eventually } from "../../helpers/ui-stream";

const MODEL = "fake:small";
/** The summarizer takes this long, so a turn sent meanwhile runs while it writes. */
const SLOW_SUMMARY_MS = 3_000;
const MAX_TURNS = 15;
/** How long after a turn to look for a background compaction starting (it starts within moments). */
const DECISION_MS = 1_000;

afterAll(() => fake.close());
beforeEach(() => fake.reset());

type Chunk = Record<string, unknown>;
const hasTrace = (chunks: readonly Chunk[]) =>
  chunks.some((c) => c.type === "tool-input-available" && c.toolName === "compact_context");

async function contextOf(database: Database, browser: Browser, chatId: string) {
  const response = await call(database, contextRoute.GET, {
    path: `/api/chats/${chatId}/context?modelId=${MODEL}`,
    params: { id: chatId },
    browser,
  });
  return (await response.json()) as { compactsNext: boolean; summarizedMessages: number };
}

/**
 * Long turns until a reply leaves the next turn over the trigger ("due": a slow summarizer is
 * still writing) or until the chat has been compacted; the turns' chunks.
 */
async function fillUntil(
  until: "due" | "compacted",
  database: Database,
  browser: Browser,
  chatId: string,
) {
  const turns: Chunk[][] = [];
  for (let turn = 0; turn < MAX_TURNS; turn++) {
    const { response, chunks } = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: longMessage(turn),
    });
    expect(response.status).toBe(200);
    turns.push(chunks);
    // The reply is stored before the browser's stream ends; the decision to compact follows it.
    // (Wrapped: an async check returning the promise itself would wait for it.)
    const folding = await eventually(async () => {
      const running = backgroundCompaction(chatId);
      return running ? { running } : null;
    }, DECISION_MS).catch(() => undefined);
    if (folding && until === "due") return turns;
    await folding?.running;
    if (until === "compacted" && (await listCompactionEvents(database.db, chatId)).length > 0) {
      return turns;
    }
  }
  throw new Error(`no reply crossed the trigger in ${MAX_TURNS} turns`);
}

describeEachDriver("compaction in the background", (use) => {
  it("compacts after a reply that crosses the trigger, with no new user turn", async () => {
    const database = use();
    const { browser } = await register(database, "background@example.com");
    const chatId = await newChat(database, browser);

    const turns = await fillUntil("compacted", database, browser, chatId);

    const events = await listCompactionEvents(database.db, chatId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ reason: "threshold", outcome: "summarized" });
    // No turn waited for it: none of them carried a compaction trace.
    expect(turns.some(hasTrace)).toBe(false);
    const after = await contextOf(database, browser, chatId);
    expect(after.compactsNext).toBe(false);
    expect(after.summarizedMessages).toBeGreaterThan(0);

    // The next turn sends the summary straight away, without compacting first.
    fake.reset();
    const next = await sendTurn(database, browser, { chatId, modelId: MODEL, text: "Thanks!" });
    expect(hasTrace(next.chunks)).toBe(false);
    expect(JSON.stringify(fake.requests.at(-1)?.messages)).toContain("<conversation-summary>");
  });

  it("lets a turn that fits run while the summarizer writes, and still commits after it", async () => {
    const database = use();
    const { browser } = await register(database, "meanwhile@example.com");
    const chatId = await newChat(database, browser);
    fake.configure({ summaryDelayMs: SLOW_SUMMARY_MS });
    try {
      await fillUntil("due", database, browser, chatId);
      const running = backgroundCompaction(chatId);
      expect(running).toBeDefined();

      const meanwhile = await sendTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: "A short question while you tidy up.",
      });
      expect(meanwhile.response.status).toBe(200);
      expect(meanwhile.chunks.some((c) => c.type === "error")).toBe(false);
      expect(hasTrace(meanwhile.chunks)).toBe(false);
      // Its reply is stored before the summary is: it did not wait for the summarizer.
      expect(await listCompactionEvents(database.db, chatId)).toEqual([]);

      await running;
      const events = await listCompactionEvents(database.db, chatId);
      expect(events.map((e) => e.outcome)).toEqual(["summarized"]);
    } finally {
      fake.configure({ summaryDelayMs: 0 });
    }
  });
});
