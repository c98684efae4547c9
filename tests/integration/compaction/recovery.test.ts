import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible server with 4,096-token windows; it also answers as the summarizer.
// Each test uses its own model id, so calibrations learned in one never leak into another.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({
    models: [
      { id: "small", maxModelLen: 4096 },
      { id: "skewed", maxModelLen: 4096 },
      { id: "stubborn", maxModelLen: 4096 },
      { id: "proxied", maxModelLen: 4096 },
    ],
    replyTokens: 120,
  });
});

import type { Database } from "@/lib/db/client";
import { getCalibration } from "@/lib/db/queries/calibration";
import type { RecordedRequest } from "../../fixtures/fake-openai/types";
import { register } from "../../helpers/auth";
import {
  type CompactResponse,
  chatRow,
  compactNowCall,
  eventsOf,
  historyOf,
  isSummaryRequest,
  lastUserTextOf,
} from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import type { Browser } from "../../helpers/http";
import { longMessage, newChat, sendTurn } from "../../helpers/turns";

afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  fake.configure({ tokenScale: 1, overflowInStream: false });
});

type Chunk = Record<string, unknown>;

/** The compaction traces a turn streamed: start (input) and end (output) by call id. */
function tracesOf(chunks: Chunk[]) {
  return chunks
    .filter((c) => c.type === "tool-input-available" && c.toolName === "compact_context")
    .map((start) => ({
      input: start.input as Record<string, unknown>,
      output: chunks.find(
        (c) => c.type === "tool-output-available" && c.toolCallId === start.toolCallId,
      )?.output as Record<string, unknown> | undefined,
    }));
}

const chatRequests = (requests: readonly RecordedRequest[]) =>
  requests.filter((r) => !isSummaryRequest(r));

/** Sends a turn and returns its chunks and the chat-model requests it made. */
async function turn(
  database: Database,
  browser: Browser,
  input: { chatId: string; modelId: string; text: string },
) {
  const first = fake.requests.length;
  const { response, chunks } = await sendTurn(database, browser, input);
  expect(response.status).toBe(200);
  const requests = fake.requests.slice(first);
  return { chunks, requests, chat: chatRequests(requests) };
}

/**
 * A chat whose model's calibration learned a tokenizer that counts half of o200k, and
 * a provider that now counts 1.5× (the admin pointed the same id at another model):
 * Fold's estimate, calibrated or not, now under-counts the prompt by a factor of three.
 * (With the cold-start ratio Tier 1's trigger would keep a 1.5× skew inside the window;
 * the stale calibration is what lets an under-counted prompt reach the provider.)
 */
async function underCountedChat(database: Database, email: string, modelId: string) {
  const { browser } = await register(database, email);
  const chatId = await newChat(database, browser);
  fake.configure({ tokenScale: 0.5 });
  for (let n = 0; n < 4; n++) {
    const { chunks, requests } = await turn(database, browser, {
      chatId,
      modelId,
      text: longMessage(n, 600),
    });
    expect(requests.map((r) => r.status)).toEqual([200]);
    expect(chunks.some((c) => c.type === "error")).toBe(false);
  }
  expect(await eventsOf(database.db, chatId)).toEqual([]);
  fake.configure({ tokenScale: 1.5 });
  return { browser, chatId };
}

const OVERFLOW_MESSAGE = (modelId: string) =>
  `This conversation no longer fits ${modelId} — compact it or start a new chat.`;

describeEachDriver("Recovery through the real turn path", (use) => {
  it("trims and retries an under-counted prompt once, completes the turn, and compacts durably next turn", async () => {
    const database = use();
    const MODEL = "fake:small";
    const { browser, chatId } = await underCountedChat(database, "undercount@example.com", MODEL);

    const text = longMessage(4, 600);
    const overflowing = await turn(database, browser, { chatId, modelId: MODEL, text });

    // Exactly one 400 (the provider's context_length_exceeded), then the trimmed retry.
    expect(overflowing.requests.map((r) => r.status)).toEqual([400, 200]);
    const [rejected, retried] = overflowing.requests;
    if (!rejected || !retried) throw new Error("expected two requests");
    expect(rejected.promptTokens).toBeGreaterThan(4096);
    expect(retried.promptTokens).toBeLessThan(rejected.promptTokens);
    expect(retried.promptTokens).toBeLessThanOrEqual(4096);
    // The trimmed retry still carries the whole new question.
    expect(lastUserTextOf(retried)).toBe(text);

    // The turn completed: no error, a reply, a finish.
    expect(overflowing.chunks.filter((c) => c.type === "error")).toEqual([]);
    expect(overflowing.chunks.some((c) => c.type === "text-delta")).toBe(true);
    expect(overflowing.chunks.some((c) => c.type === "finish")).toBe(true);

    // The timeline shows the recovery.
    const traces = tracesOf(overflowing.chunks);
    expect(traces).toHaveLength(1);
    expect(traces[0]?.input).toMatchObject({ reason: "overflow" });
    expect(traces[0]?.output).toMatchObject({
      outcome: "trimmed",
      reason: "overflow",
      messagesSummarized: 0,
    });
    expect(Number(traces[0]?.output?.tokensAfter)).toBeLessThan(
      Number(traces[0]?.output?.tokensBefore),
    );
    expect(String(traces[0]?.output?.note)).toContain(
      rejected.promptTokens.toLocaleString("en-US"),
    );

    // The reply is stored; the chat is flagged so the next turn compacts durably.
    const history = await historyOf(database.db, chatId);
    expect(history.at(-1)?.role).toBe("assistant");
    expect(history.at(-2)?.role).toBe("user");
    expect((await chatRow(database.db, chatId)).compactionDirty).toBe(true);
    expect(
      (await eventsOf(database.db, chatId)).map((e) => ({ reason: e.reason, outcome: e.outcome })),
    ).toEqual([{ reason: "overflow", outcome: "skipped" }]);

    // Next turn: Tier 1 folds the chat into a summary, for the overflow.
    const next = await turn(database, browser, { chatId, modelId: MODEL, text: longMessage(5) });
    expect(next.chunks.filter((c) => c.type === "error")).toEqual([]);
    const nextTraces = tracesOf(next.chunks);
    expect(nextTraces.map((t) => t.output)).toEqual([
      expect.objectContaining({ outcome: "summarized", reason: "overflow" }),
    ]);
    // The chat request itself fits the first time.
    expect(next.chat.map((r) => r.status)).toEqual([200]);
    expect(JSON.stringify(next.chat[0]?.messages)).toContain("<conversation-summary>");

    const row = await chatRow(database.db, chatId);
    expect(row.compactionDirty).toBe(false);
    expect(row.contextSummary).toContain("## Goal & open requests");
    const events = await eventsOf(database.db, chatId);
    expect(events.map((e) => ({ reason: e.reason, outcome: e.outcome }))).toEqual([
      { reason: "overflow", outcome: "skipped" },
      { reason: "overflow", outcome: "summarized" },
    ]);
  });

  it("trims and retries once when the refusal comes inside an opened stream, as some proxies send it", async () => {
    const database = use();
    const MODEL = "fake:proxied";
    const { browser, chatId } = await underCountedChat(database, "proxied@example.com", MODEL);
    fake.configure({ overflowInStream: true });

    const text = longMessage(4, 600);
    const overflowing = await turn(database, browser, { chatId, modelId: MODEL, text });

    // The refusal came with a 200: the prompt over the window, then the trimmed retry.
    const [refused, retried] = overflowing.chat;
    if (!refused || !retried) throw new Error("expected two requests");
    expect(overflowing.chat).toHaveLength(2);
    expect(refused.promptTokens).toBeGreaterThan(4096);
    expect(retried.promptTokens).toBeLessThanOrEqual(4096);
    expect(lastUserTextOf(retried)).toBe(text);

    // A whole reply, no error, and the timeline shows the recovery with the provider's count.
    expect(overflowing.chunks.filter((c) => c.type === "error")).toEqual([]);
    expect(overflowing.chunks.some((c) => c.type === "text-delta")).toBe(true);
    const traces = tracesOf(overflowing.chunks);
    expect(traces.map((t) => t.output)).toEqual([
      expect.objectContaining({ outcome: "trimmed", reason: "overflow" }),
    ]);
    expect(String(traces[0]?.output?.note)).toContain(refused.promptTokens.toLocaleString("en-US"));
    const history = await historyOf(database.db, chatId);
    expect(history.at(-1)?.role).toBe("assistant");
    expect((await chatRow(database.db, chatId)).compactionDirty).toBe(true);
  });

  it("calibrates a recovered turn from the provider's count of the prompt Fold estimated, not from the trimmed retry", async () => {
    const database = use();
    const MODEL = "fake:skewed";
    const { browser, chatId } = await underCountedChat(database, "calibrate@example.com", MODEL);
    const before = await getCalibration(database.db, "fake", "skewed");
    expect(before?.ratio).toBeCloseTo(0.5, 1);

    const overflowing = await turn(database, browser, {
      chatId,
      modelId: MODEL,
      text: longMessage(4, 600),
    });
    expect(overflowing.requests.map((r) => r.status)).toEqual([400, 200]);
    const samples = (before?.samples ?? 0) + 1;
    // The sample is recorded after the reply is stored.
    let after = await getCalibration(database.db, "fake", "skewed");
    for (let i = 0; i < 200 && (after?.samples ?? 0) < samples; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      after = await getCalibration(database.db, "fake", "skewed");
    }
    // The provider said the untrimmed prompt was 1.5× Fold's raw estimate of it (the 400
    // names the count). A sample of ~1.5 moves the ratio from 0.5 to ~0.85; learning from the
    // trimmed retry's usage instead (≈ 0.7) barely moves it, and the next turn
    // under-counts again — its summarizer request overflows too.
    expect(
      after?.ratio ?? 0,
      "the overflowed turn must not teach calibration from the trimmed retry",
    ).toBeGreaterThan(0.75);
  });

  it("after a second overflow, says the chat no longer fits, keeps the message, and compact-now fixes it", async () => {
    const database = use();
    const MODEL = "fake:stubborn";
    const { browser } = await register(database, "stubborn@example.com");
    const chatId = await newChat(database, browser);
    for (let n = 0; n < 3; n++) {
      const { requests } = await turn(database, browser, {
        chatId,
        modelId: MODEL,
        text: longMessage(n),
      });
      expect(requests.map((r) => r.status)).toEqual([200]);
    }

    // The provider refuses the prompt and the trimmed retry alike.
    fake.script({ fault: "overflow" }, { fault: "overflow" });
    const messageId = `u-${crypto.randomUUID()}`;
    const text = longMessage(3);
    const first = fake.requests.length;
    const { response, chunks } = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text,
      id: messageId,
    });
    expect(response.status).toBe(200);
    const failed = fake.requests.slice(first);
    // One retry, never a third request.
    expect(failed.map((r) => r.status)).toEqual([400, 400]);
    expect(fake.pendingScript).toBe(0);

    const errors = chunks.filter((c) => c.type === "error");
    expect(errors).toEqual([{ type: "error", errorText: OVERFLOW_MESSAGE(MODEL) }]);
    expect(tracesOf(chunks).map((t) => t.output)).toEqual([
      expect.objectContaining({ outcome: "trimmed", reason: "overflow" }),
    ]);

    // The user's message is saved; no half reply is.
    const history = await historyOf(database.db, chatId);
    expect(history.at(-1)?.id).toBe(messageId);
    expect(history.at(-1)?.role).toBe("user");
    expect((await chatRow(database.db, chatId)).compactionDirty).toBe(true);

    // Compact now folds the chat into a summary…
    const compacted = await compactNowCall(database, browser, chatId, { modelId: MODEL });
    expect(compacted.status).toBe(200);
    const body = (await compacted.json()) as CompactResponse;
    expect(body.trace).toMatchObject({ outcome: "summarized", reason: "manual" });
    const row = await chatRow(database.db, chatId);
    expect(row.compactionDirty).toBe(false);
    expect(row.contextSummary).toContain("## Goal & open requests");

    // …and the next turn goes through, on the summary.
    const next = await turn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "Can you answer my last question now?",
    });
    expect(next.chunks.filter((c) => c.type === "error")).toEqual([]);
    expect(next.chunks.some((c) => c.type === "text-delta")).toBe(true);
    expect(next.requests.map((r) => r.status)).toEqual([200]);
    expect(JSON.stringify(next.chat[0]?.messages)).toContain("<conversation-summary>");
    // The question that failed still reaches the model.
    expect(JSON.stringify(next.chat[0]?.messages)).toContain("Question 3: please think");
    const after = await historyOf(database.db, chatId);
    expect(after.at(-1)?.role).toBe("assistant");
  });
});
