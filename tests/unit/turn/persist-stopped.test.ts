import type { UIMessageChunk } from "ai";
import { beforeEach, expect, it, vi } from "vitest";
import type { TraceOutput } from "@/lib/compaction/trace";
import type { Db } from "@/lib/db/client";
import type { Lease } from "@/lib/db/queries/leases";

const queries = vi.hoisted(() => ({
  appendMessageAsTurnHolder: vi.fn(async (): Promise<unknown> => ({})),
}));
vi.mock("@/lib/db/queries/messages", () => queries);
vi.mock("@/lib/db/queries/chats", () => ({ getChat: vi.fn(async () => ({ id: "c1" })) }));
vi.mock("@/lib/log", () => ({ log: { info: vi.fn(), warn: vi.fn(), error: vi.fn() } }));

const { assembleReply, persistReply } = await import("@/lib/turn/persist");
const { noObservations } = await import("@/lib/turn/observe");
const { traceEndChunk, traceStartChunk } = await import("@/lib/compaction/trace");

const token: Lease = { chatId: "c1", until: new Date(1), kind: "turn" };
const held = { asHolder: <T>(write: (lease: Lease) => Promise<T>) => write(token) };

const started = { reason: "threshold", tokensBefore: 3000, messages: 6, startedAt: 1 };
const ended = (outcome: TraceOutput["outcome"]): TraceOutput => ({
  outcome,
  reason: "threshold",
  tokensBefore: 3000,
  tokensAfter: outcome === "summarized" ? 1000 : 3000,
  savedPct: outcome === "summarized" ? 66.7 : 0,
  messagesSummarized: outcome === "summarized" ? 6 : 0,
  summarizerModel: null,
  durationMs: 10,
  summary: null,
  note: null,
});

/** A turn's reply that got as far as Tier 1's trace (and `more`), then was stopped. */
function stoppedAfterTrace(outcome: TraceOutput["outcome"], more: UIMessageChunk[] = []) {
  const assembly = assembleReply();
  const chunks: UIMessageChunk[] = [
    { type: "start", messageId: "a1" },
    traceStartChunk("compact-a1", started),
    traceEndChunk("compact-a1", ended(outcome)),
    ...more,
    { type: "finish", messageMetadata: { stopped: true } },
  ];
  for (const chunk of chunks) assembly.write(chunk);
  assembly.end();
  return assembly;
}

beforeEach(() => queries.appendMessageAsTurnHolder.mockClear());

it("stores the fold Tier 1 made before the stop as its timeline entry, and no reply", async () => {
  const early = { ...noObservations(), stopped: true, stoppedBeforeModel: true };
  expect(await persistReply({} as Db, "c1", stoppedAfterTrace("summarized"), early, held)).toBe(
    true,
  );
  expect(queries.appendMessageAsTurnHolder).toHaveBeenCalledWith(
    {},
    "c1",
    {
      id: "a1",
      role: "assistant",
      parts: [
        expect.objectContaining({
          type: "tool-compact_context",
          state: "output-available",
          input: started,
          output: ended("summarized"),
        }),
      ],
      metadata: { compaction: true },
    },
    token,
  );

  // So too when the stop came during the model call, before the model wrote anything.
  queries.appendMessageAsTurnHolder.mockClear();
  const late = { ...noObservations(), stopped: true };
  const unwritten = stoppedAfterTrace("summarized", [{ type: "start-step" }]);
  expect(await persistReply({} as Db, "c1", unwritten, late, held)).toBe(true);
  expect(queries.appendMessageAsTurnHolder).toHaveBeenCalledWith(
    {},
    "c1",
    expect.objectContaining({ id: "a1", metadata: { compaction: true } }),
    token,
  );

  // A compaction stopped before it folded anything stores nothing: it did not happen.
  queries.appendMessageAsTurnHolder.mockClear();
  const unfolded = { ...noObservations(), stopped: true, stoppedBeforeModel: true };
  expect(await persistReply({} as Db, "c1", stoppedAfterTrace("stopped"), unfolded, held)).toBe(
    false,
  );
  expect(queries.appendMessageAsTurnHolder).not.toHaveBeenCalled();
  expect(unfolded.unsaved).toBeUndefined();

  // A reply the model had begun to write is the reply, Stopped, its compaction's trace in it.
  const observed = { ...noObservations(), stopped: true };
  const written = stoppedAfterTrace("summarized", [
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: "Half of it" },
    { type: "text-end", id: "t" },
  ]);
  expect(await persistReply({} as Db, "c1", written, observed, held)).toBe(true);
  expect(queries.appendMessageAsTurnHolder).toHaveBeenCalledWith(
    {},
    "c1",
    {
      id: "a1",
      role: "assistant",
      parts: [
        expect.objectContaining({ type: "tool-compact_context" }),
        expect.objectContaining({ type: "text", text: "Half of it" }),
      ],
      metadata: { stopped: true },
    },
    token,
  );
});
