import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible server with a 4,096-token window; it also answers as the summarizer.
const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW, {
    // Tier 1 inside the turn, as when the background compaction is off or has not run.
    COMPACTION_BACKGROUND: "false",
  });
});

import { eq } from "drizzle-orm";
import { listCompactionEvents } from "@/lib/db/queries/compaction-events";
import { loadHistory } from "@/lib/db/queries/messages";
import { chat as chatTable } from "@/lib/db/schema";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { longMessage, newChat, sendTurn } from "../../helpers/turns";

const MODEL = "fake:small";

afterAll(() => fake.close());
beforeEach(() => fake.reset());

const isSummaryRequest = (r: { messages: Array<{ role: string; content?: unknown }> }) =>
  r.messages.some((m) => m.role === "system" && String(m.content).includes("Goal & open requests"));

describeEachDriver("Tier 1 through the real turn path", (use) => {
  it("compacts a long chat before it overflows, shows the trace, and sends the summary instead of old turns", async () => {
    const database = use();
    const { browser } = await register(database, "long@example.com");
    const chatId = await newChat(database, browser);

    const traces: Array<{ turn: number; output: Record<string, unknown> }> = [];
    for (let turn = 0; turn < 12; turn++) {
      const { response, chunks } = await sendTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: longMessage(turn),
      });
      expect(response.status).toBe(200);
      expect(
        chunks.some((c) => c.type === "error"),
        `turn ${turn} errored`,
      ).toBe(false);
      const start = chunks.find(
        (c) => c.type === "tool-input-available" && c.toolName === "compact_context",
      );
      const end = chunks.find(
        (c) => c.type === "tool-output-available" && c.toolCallId === start?.toolCallId,
      );
      if (start) {
        // The running trace comes before any of the reply's text.
        expect(chunks.indexOf(start)).toBeLessThan(
          chunks.findIndex((c) => c.type === "text-delta"),
        );
        traces.push({ turn, output: end?.output as Record<string, unknown> });
      }
    }

    // Nothing ever overflowed the provider's window.
    expect(fake.requests.filter((r) => r.status !== 200)).toEqual([]);
    expect(traces.length).toBeGreaterThanOrEqual(1);
    for (const { output } of traces) {
      expect(output).toMatchObject({ outcome: "summarized", summarizerModel: MODEL });
      expect(Number(output.tokensAfter)).toBeLessThan(Number(output.tokensBefore));
    }
    // Hysteresis: a compaction is never followed by another on the very next turn.
    for (let i = 1; i < traces.length; i++)
      expect((traces[i]?.turn ?? 0) - (traces[i - 1]?.turn ?? 0)).toBeGreaterThan(1);

    const [row] = await database.db.select().from(chatTable).where(eq(chatTable.id, chatId));
    expect(row?.contextSummary).toContain("## Goal & open requests");
    expect(row?.compactionDirty).toBe(false);
    const history = await loadHistory(database.db, chatId);
    expect(history.some((m) => m.id === row?.summaryWatermark)).toBe(true);

    const events = await listCompactionEvents(database.db, chatId);
    expect(events.filter((e) => e.outcome === "summarized")).toHaveLength(traces.length);
    expect(events[0]?.summary).toBe(row?.contextSummary);

    // The last chat request carries the summary, not the first question.
    const lastChat = fake.requests.filter((r) => !isSummaryRequest(r)).at(-1);
    const sent = JSON.stringify(lastChat?.messages);
    expect(sent).toContain("<conversation-summary>");
    const firstQuestionSent = lastChat?.messages.some(
      (m) => m.role === "user" && String(m.content).startsWith("Question 0:"),
    );
    expect(firstQuestionSent).toBe(false);
    // The trace is stored with the reply for the timeline, and never sent to the model.
    expect(sent).not.toContain("compact_context");
    const stored = history.find((m) =>
      (m.parts as Array<{ type: string }>).some((p) => p.type === "tool-compact_context"),
    );
    expect(stored?.role).toBe("assistant");
  });

  it("sends each message to the summarizer once across chained compactions", async () => {
    const database = use();
    const { browser } = await register(database, "chain@example.com");
    const chatId = await newChat(database, browser);
    for (let turn = 0; turn < 20; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    const summaryRequests = fake.requests.filter(isSummaryRequest);
    expect(summaryRequests.length).toBeGreaterThanOrEqual(2);
    const seen = new Map<number, number>();
    for (const request of summaryRequests) {
      const text = JSON.stringify(request.messages.filter((m) => m.role === "user"));
      // Count the span's own <user> blocks, not goals carried in the previous summary.
      for (const match of text.matchAll(/<user>\\n?Question (\d+): please think/g)) {
        const n = Number(match[1]);
        seen.set(n, (seen.get(n) ?? 0) + 1);
      }
    }
    expect([...seen.values()].every((count) => count === 1)).toBe(true);
    // Summarized in order, starting from the first question.
    expect(seen.has(0)).toBe(true);
  });
});
