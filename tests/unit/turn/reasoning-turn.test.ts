import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { convertToModelMessages, type UIMessageChunk } from "ai";
import { expect, it, vi } from "vitest";

// Short deadlines so the test runs in seconds: a model may take 20 s to begin answering, and
// once it has begun it may not go quiet for more than 1 s.
vi.hoisted(() => {
  process.env.TURN_IDLE_TIMEOUT_MS = "1000";
  process.env.TURN_FIRST_TOKEN_TIMEOUT_MS = "20000";
});

import { createEstimator } from "@/lib/context/tokens";
import { env } from "@/lib/env";
import type { MessageMetadata } from "@/lib/message/stats";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { withoutEarlierTurnsReasoning } from "@/lib/turn/answer";
import { answeringModel, answerWith, streamingModel, usage } from "./answer-harness";

/**
 * An OpenAI reasoning model (o4-mini, o3) through the Responses API without reasoning summaries:
 * `response.output_item.added` (type reasoning) gives a `reasoning-start` with the item id at
 * once, then nothing at all while the model thinks (no summary deltas), then the reasoning
 * item's end and the answer. Thinking silently for longer than the idle deadline is normal.
 */
const silentThinker = (thinkMs: number) =>
  streamingModel(async (controller) => {
    controller.enqueue({ type: "stream-start", warnings: [] });
    controller.enqueue({
      type: "reasoning-start",
      id: "rs_1:0",
      providerMetadata: { openai: { itemId: "rs_1", reasoningEncryptedContent: null } },
    });
    await new Promise((resolve) => setTimeout(resolve, thinkMs));
    for (const part of [
      { type: "reasoning-end", id: "rs_1:0", providerMetadata: { openai: { itemId: "rs_1" } } },
      { type: "text-start", id: "msg_1" },
      { type: "text-delta", id: "msg_1", delta: "All done." },
      { type: "text-end", id: "msg_1" },
      { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
    ] as LanguageModelV4StreamPart[])
      controller.enqueue(part);
    controller.close();
  });

it("a reasoning model that thinks silently after reasoning-start is not cut off by the idle deadline", async () => {
  expect(env().turnIdleTimeoutMs).toBe(1000);
  const chunks: UIMessageChunk[] = [];
  // Not "The model stopped responding (nothing for 1 s)": it was thinking, well inside the 20 s
  // it is given to begin its answer.
  await expect(answerWith(silentThinker(2_500), { chunks })).resolves.toBeDefined();
  expect(chunks.filter((c) => c.type === "text-delta").map((c) => c.delta)).toEqual(["All done."]);
});

it("a reply stopped after long reasoning counts its reasoning as output, not as context the next request carries", async () => {
  const reasoning = "Let me weigh each case in turn before I answer. ".repeat(200);
  const thinker = streamingModel((controller, call) => {
    for (const part of [
      { type: "stream-start", warnings: [] },
      { type: "reasoning-start", id: "r1" },
      { type: "reasoning-delta", id: "r1", delta: reasoning },
      { type: "reasoning-end", id: "r1" },
      { type: "text-start", id: "t1" },
      { type: "text-delta", id: "t1", delta: "The answer starts" },
    ] as LanguageModelV4StreamPart[])
      controller.enqueue(part);
    // Then nothing until the user stops it.
    call.abortSignal?.addEventListener("abort", () => controller.error(call.abortSignal?.reason));
  });
  const stop = new AbortController();
  const chunks: UIMessageChunk[] = [];
  const run = answerWith(thinker, { chunks, stopSignal: stop.signal });
  await vi.waitFor(() => expect(chunks.some((c) => c.type === "text-delta")).toBe(true));
  stop.abort();
  await run;
  const finish = chunks.findLast((c) => c.type === "finish") as
    | { messageMetadata?: MessageMetadata }
    | undefined;
  const stats = finish?.messageMetadata?.stats;
  const estimator = createEstimator();
  expect(stats?.reasoningTokens).toBe(estimator.countText(reasoning));
  expect(stats?.outputTokens).toBe(
    estimator.countText(reasoning) + estimator.countText("The answer starts"),
  );
  expect(stats?.lastStepOutputTokens).toBe(estimator.countText("The answer starts"));
});

it("sends no earlier turn's reasoning: providers drop it, and Fold does not count it", async () => {
  const model = answeringModel("Yes.");
  const thought = "Weighing the first mirror against the second at great length.";
  await answerWith(model, {
    view: [
      { id: "u1", role: "user", parts: [{ type: "text", text: "Which mirror?" }] },
      {
        id: "a1",
        role: "assistant",
        parts: [
          { type: "reasoning", text: thought, state: "done" },
          { type: "text", text: "The second.", state: "done" },
        ],
      },
      { id: "a2", role: "assistant", parts: [{ type: "reasoning", text: thought, state: "done" }] },
      { id: "u2", role: "user", parts: [{ type: "text", text: "Sure?" }] },
    ],
  });
  const sent = JSON.stringify(model.doStreamCalls[0]?.prompt);
  expect(sent).toContain("The second.");
  expect(sent).toContain("Sure?");
  expect(sent).not.toContain(thought);
});

it("keeps the reasoning of the turn running: a reply waiting on a tool approval goes on from it", async () => {
  const view = [
    { id: "u1", role: "user", parts: [{ type: "text", text: "Delete the old files." }] },
    {
      id: "a1",
      role: "assistant",
      parts: [
        { type: "step-start" },
        { type: "reasoning", text: "List them first, then delete.", state: "done" },
        {
          type: "tool-delete_files",
          toolCallId: "c1",
          state: "approval-responded",
          input: { glob: "*.old" },
          approval: { id: "ap1", approved: true },
        },
      ],
    },
  ] as FoldUIMessage[];
  const messages = withoutEarlierTurnsReasoning(await convertToModelMessages(view));
  // The approval's answer is the last message; the reply it answers keeps its thinking.
  expect(messages.at(-1)?.role).toBe("tool");
  expect(JSON.stringify(messages)).toContain("List them first, then delete.");
});
