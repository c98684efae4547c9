import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible server with a 4,096-token window (like vLLM, a reply may only use
// what the window has left), and a local web server whose page fetch_url reads, counting visits.
const { fake, pages } = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  const { startPageServer } = await import("../../helpers/page-server");
  const server = await startFakeProvider(
    { models: [{ id: "small", maxModelLen: 4096 }] },
    { FETCH_URL_ALLOW_PRIVATE: "1", COMPACTION_BACKGROUND: "false" },
  );
  const pages = await startPageServer(() => ({
    body: "<!doctype html><html><head><title>Release notes</title></head><body><p>Version 4.2 ships the importer's dry-run flag.</p></body></html>",
  }));
  return { fake: server, pages };
});

import { loadHistory } from "@/lib/db/queries/messages";
import { liveBus } from "@/lib/live/bus";
import { requestStop } from "@/lib/live/stop";
import { countTextTokens } from "../../fixtures/fake-openai/tokens";
import { register } from "../../helpers/auth";
import { isSummaryRequest } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { newChat, postTurn, sendTurn } from "../../helpers/turns";
import { streamChunks, textOf } from "../../helpers/ui-stream";

const MODEL = "fake:small";
const RAMBLING = "word ".repeat(4000);

afterAll(async () => {
  await fake.close();
  await pages.close();
});
beforeEach(() => {
  fake.reset();
  pages.visits.length = 0;
});

type Part = { type: string; text?: string; state?: string; output?: unknown };

describeEachDriver("a tool loop whose last step the window cuts short", (use) => {
  it("asks again for that step only: the retry carries the fetch to the model, and the reply keeps it", async () => {
    const database = use();
    const { browser } = await register(database, "length-tools@example.com");
    const chatId = await newChat(database, browser);
    fake.script(
      { toolCalls: [{ name: "fetch_url", arguments: { url: `${pages.url}/notes` } }] },
      // The step after the fetch runs into the end of the window; the retry answers.
      { text: RAMBLING },
      { text: "Version 4.2 has the dry-run flag." },
    );
    const { chunks } = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "What does the latest release add?",
    });
    expect(chunks.some((c) => c.type === "error")).toBe(false);
    expect(chunks.some((c) => c.type === "data-fold-retry")).toBe(true);

    // The tool ran once; the retry carried its call and result to the model.
    expect(pages.visits).toEqual(["/notes"]);
    const chatRequests = fake.requests.filter((r) => !isSummaryRequest(r) && r.status === 200);
    expect(chatRequests).toHaveLength(3);
    const retried = chatRequests.at(-1);
    const toolResult = retried?.messages.find((m) => m.role === "tool");
    expect(toolResult).toBeDefined();
    expect(JSON.stringify(toolResult?.content)).toContain("dry-run flag");
    expect(retried?.messages.some((m) => m.role === "assistant" && "tool_calls" in m)).toBe(true);

    // Stored: the fetch and the answer, not the cut-short step.
    const reply = (await loadHistory(database.db, chatId)).at(-1);
    const parts = reply?.parts as Part[];
    const fetched = parts.filter((p) => p.type === "tool-fetch_url");
    expect(fetched).toHaveLength(1);
    expect(fetched[0]?.state).toBe("output-available");
    const text = parts
      .filter((p) => p.type === "text")
      .map((p) => p.text)
      .join("");
    expect(text).toBe("Version 4.2 has the dry-run flag.");
    expect(parts.some((p) => p.type === "data-fold-retry")).toBe(false);
    // The reply's steps: the fetch and the answer. Its input counts all three requests: the
    // cut attempt's two and the retry.
    const metadata = reply?.metadata as
      | { stats: { steps: number; inputTokens: number } }
      | undefined;
    expect(metadata?.stats.steps).toBe(2);
    const sent = chatRequests.reduce((sum, r) => sum + r.promptTokens, 0);
    expect(metadata?.stats.inputTokens).toBe(sent);
  });

  it("starts from the whole view again when the finished steps cannot be made to fit", async () => {
    const database = use();
    const { browser } = await register(database, "length-many-tools@example.com");
    const chatId = await newChat(database, browser);
    const FETCHES = 40;
    fake.script(
      ...Array.from({ length: FETCHES }, (_, i) => ({
        toolCalls: [{ name: "fetch_url", arguments: { url: `${pages.url}/notes?page=${i}` } }],
      })),
      { text: RAMBLING },
      { text: "The release adds a dry-run flag." },
    );
    const { chunks } = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "Read every page of the release notes.",
    });
    expect(chunks.some((c) => c.type === "error")).toBe(false);
    const marker = chunks.find((c) => c.type === "data-fold-retry") as
      | { data?: { keepsSteps?: boolean } }
      | undefined;
    expect(marker?.data?.keepsSteps).toBe(false);
    const retried = fake.requests.filter((r) => !isSummaryRequest(r) && r.status === 200).at(-1);
    expect(retried?.messages.some((m) => m.role === "tool")).toBe(false);

    const reply = (await loadHistory(database.db, chatId)).at(-1);
    const parts = reply?.parts as Part[];
    expect(parts.some((p) => p.type === "tool-fetch_url")).toBe(false);
    expect(
      parts
        .filter((p) => p.type === "text")
        .map((p) => p.text)
        .join(""),
    ).toBe("The release adds a dry-run flag.");
  });

  it("counts the cut attempt in the stats of a retry the user stops", async () => {
    const database = use();
    const { browser } = await register(database, "length-stopped@example.com");
    const chatId = await newChat(database, browser);
    fake.script(
      { toolCalls: [{ name: "fetch_url", arguments: { url: `${pages.url}/notes` } }] },
      { text: RAMBLING },
      // The retry takes its time: the user stops it before it answers.
      { fault: "slow", delayMs: 10_000, text: "Too late." },
    );
    const response = await postTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "What does the latest release add?",
    });
    expect(response.status).toBe(200);
    const chunks: Array<Record<string, unknown>> = [];
    const stream = streamChunks(response.body as ReadableStream<Uint8Array>);
    for (;;) {
      const next = await stream.next();
      if (next.done) break;
      chunks.push(next.value);
      if (next.value.type === "data-fold-retry") await requestStop(liveBus(), chatId);
    }
    const finish = chunks.find((c) => c.type === "finish") as
      | {
          messageMetadata?: {
            stopped?: boolean;
            stats?: {
              inputTokens: number;
              outputTokens: number;
              contextTokens: number;
              viewTrimmed?: boolean;
            };
          };
        }
      | undefined;
    expect(finish?.messageMetadata?.stopped).toBe(true);
    const stats = finish?.messageMetadata?.stats;
    // The two requests of the cut attempt were answered and counted; the stopped retry adds
    // Fold's estimate of its own request, trimmed in memory.
    const answered = fake.requests.filter((r) => !isSummaryRequest(r) && r.status === 200);
    const cutAttempt = answered.slice(0, 2).reduce((sum, r) => sum + r.promptTokens, 0);
    expect(stats?.inputTokens).toBeGreaterThan(cutAttempt);
    // Its context is that trimmed request, not the cut attempt's last one, near the window.
    const cutRequest = answered[1]?.promptTokens ?? 0;
    const retried = fake.requests.filter((r) => !isSummaryRequest(r)).at(-1);
    expect(stats?.contextTokens).toBeLessThan(cutRequest);
    expect(stats?.contextTokens).toBeGreaterThanOrEqual((retried?.promptTokens ?? 0) * 0.9);
    expect(stats?.inputTokens).toBeLessThan(cutAttempt + cutRequest);
    // The cut attempt's output is counted once: as the provider reported it, not again from
    // the text it streamed before the retry.
    const marker = chunks.findIndex((c) => c.type === "data-fold-retry");
    const cutText = textOf(chunks.slice(0, marker));
    expect(countTextTokens(cutText)).toBeGreaterThan(1000);
    expect(stats?.outputTokens).toBeLessThan(countTextTokens(cutText) * 1.5);
    // Its requests were trimmed in memory: the next turn reads no window from its count.
    expect(stats?.viewTrimmed).toBe(true);
  });
});
