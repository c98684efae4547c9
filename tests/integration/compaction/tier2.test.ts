import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible server with an 8,192-token window, and a local web server whose
// pages fetch_url reads (private addresses allowed, as on an intranet deployment).
const { fake, pages } = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  const { startPageServer } = await import("../../helpers/page-server");
  const server = await startFakeProvider(
    {
      models: [
        { id: "mid", maxModelLen: 8192 },
        { id: "tiny", maxModelLen: 4096 },
      ],
    },
    {
      FETCH_URL_ALLOW_PRIVATE: "1",
    },
  );

  const words = ["river", "mountain", "archive", "ledger", "harbor", "signal", "orchard", "copper"];
  /** ~20 kB of readable text per page (a note: ~1 kB), different per page number. */
  const pageText = (n: number, chars = 19_000) => {
    const paragraphs: string[] = [];
    let length = 0;
    for (let p = 0; length < chars; p++) {
      const sentence = Array.from(
        { length: 24 },
        (_, i) => `${words[(i * 3 + p + n) % words.length]}${(i + p * 7 + n) % 97}`,
      ).join(" ");
      const paragraph = `Page ${n} paragraph ${p}: ${sentence}.`;
      paragraphs.push(paragraph);
      length += paragraph.length + 2;
    }
    return paragraphs;
  };
  const pages = await startPageServer((path) => {
    const n = Number(/\/(?:page|note)\/(\d+)/.exec(path)?.[1] ?? 0);
    const chars = path.startsWith("/note/") ? 1_000 : 19_000;
    return {
      body: `<!doctype html><html><head><title>Page ${n}</title></head><body>${pageText(n, chars)
        .map((p) => `<p>${p}</p>`)
        .join("\n")}</body></html>`,
    };
  });
  return { fake: server, pages };
});

import { modelBudget } from "@/lib/chat/budget";
import { countTextTokens } from "../../fixtures/fake-openai/tokens";
import type { RecordedRequest, WireMessage } from "../../fixtures/fake-openai/types";
import { register } from "../../helpers/auth";
import { historyOf, isSummaryRequest } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { longMessage, newChat, sendTurn } from "../../helpers/turns";

const MODEL = "fake:mid";
const FETCHES = 6;

afterAll(async () => {
  await fake.close();
  await pages.close();
});
beforeEach(() => fake.reset());

const toolMessages = (request: RecordedRequest): WireMessage[] =>
  request.messages.filter((m) => m.role === "tool");
const toolContent = (message: WireMessage): string =>
  typeof message.content === "string" ? message.content : JSON.stringify(message.content);

describeEachDriver("Tier 2 through the real turn path", (use) => {
  it("finishes a tool loop that would overflow the window mid-turn, with no provider error", async () => {
    const database = use();
    const { browser } = await register(database, "tier2@example.com");
    const chatId = await newChat(database, browser);
    fake.script(
      ...Array.from({ length: FETCHES }, (_, i) => ({
        toolCalls: [{ name: "fetch_url", arguments: { url: `${pages.url}/page/${i}` } }],
      })),
      { text: "All six pages agree on the harbor ledger." },
    );

    const { response, chunks } = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "Read pages 0 to 5 on the intranet and tell me what they agree on.",
    });
    expect(response.status).toBe(200);
    expect(chunks.filter((c) => c.type === "error")).toEqual([]);

    // Every fetch ran and returned its page.
    const outputs = chunks.filter((c) => c.type === "tool-output-available");
    expect(outputs).toHaveLength(FETCHES);
    const pageTexts = outputs.map((c) => (c.output as { text: string }).text);
    for (const text of pageTexts) expect(text.length).toBeGreaterThan(15_000);
    // The answer came after the last tool step.
    const answer = chunks
      .filter((c) => c.type === "text-delta")
      .map((c) => c.delta)
      .join("");
    expect(answer).toBe("All six pages agree on the harbor ledger.");
    expect(chunks.some((c) => c.type === "finish")).toBe(true);

    // The provider never refused a request: Tier 2 kept every step inside the window,
    // so recovery never had to step in.
    const requests = fake.requests.filter((r) => !isSummaryRequest(r));
    expect(requests.map((r) => r.status)).toEqual(Array(FETCHES + 1).fill(200));
    expect(
      chunks.some((c) => c.type === "tool-input-available" && c.toolName === "compact_context"),
    ).toBe(false);

    // Together the results are far larger than the window…
    const resultTokens = outputs.reduce((n, c) => n + countTextTokens(JSON.stringify(c.output)), 0);
    expect(resultTokens).toBeGreaterThan(2 * 8192);
    const lastRequest = requests.at(-1);
    if (!lastRequest) throw new Error("no requests");
    expect(toolMessages(lastRequest)).toHaveLength(FETCHES);
    const sentChars = toolMessages(lastRequest).reduce((n, m) => n + toolContent(m).length, 0);
    const resultChars = outputs.reduce((n, c) => n + JSON.stringify(c.output).length, 0);
    expect(sentChars).toBeLessThan(resultChars / 4);
    // …and every step after the first fetch carried less than all the results (and fit).
    for (const request of requests.slice(1)) {
      expect(request.promptTokens).toBeLessThan(resultTokens);
      expect(request.promptTokens).toBeLessThan(8192);
    }

    // Older results went out as placeholders or cut outputs; the calls are all still there.
    const lastSent = JSON.stringify(lastRequest.messages);
    expect(lastSent).toMatch(
      /omitted: [\d,]+ chars; call the tool again if needed|chars cut to fit the context window/,
    );
    const calls = lastRequest.messages.flatMap((m) =>
      Array.isArray(m.tool_calls) ? (m.tool_calls as Array<{ id: string }>) : [],
    );
    expect(calls).toHaveLength(FETCHES);
    const resultIds = toolMessages(lastRequest).map((m) => m.tool_call_id);
    expect(resultIds).toEqual(calls.map((c) => c.id));

    // Tier 2 is in memory only: the stored reply keeps every page whole.
    const history = await historyOf(database.db, chatId);
    const reply = history.at(-1);
    expect(reply?.role).toBe("assistant");
    const stored = (
      (reply?.parts ?? []) as Array<{ type: string; output?: { text?: string } }>
    ).filter((p) => p.type === "tool-fetch_url");
    expect(stored.map((p) => p.output?.text)).toEqual(pageTexts);
  });

  it("completes a 60-step tool loop in one turn at 4,096 by folding its earlier steps", async () => {
    const database = use();
    const { browser } = await register(database, "tier2-long@example.com");
    const chatId = await newChat(database, browser);
    const steps = 60;
    const question =
      "Read every page from 0 to 59 on the intranet, then tell me what they agree on.";
    fake.script(
      ...Array.from({ length: steps }, (_, i) => ({
        toolCalls: [
          { name: "fetch_url", arguments: { url: `${pages.url}/page/${i}?ref=step-${i}` } },
        ],
      })),
      { text: "All sixty pages agree on the harbor ledger." },
    );

    const { response, chunks } = await sendTurn(database, browser, {
      chatId,
      modelId: "fake:tiny",
      text: question,
    });
    expect(response.status).toBe(200);
    expect(chunks.filter((c) => c.type === "error")).toEqual([]);
    expect(chunks.filter((c) => c.type === "tool-output-available")).toHaveLength(steps);
    const answer = chunks
      .filter((c) => c.type === "text-delta")
      .map((c) => c.delta)
      .join("");
    expect(answer).toBe("All sixty pages agree on the harbor ledger.");

    // No request was refused, and every one fit the 4,096-token window.
    const requests = fake.requests.filter((r) => !isSummaryRequest(r));
    expect(requests).toHaveLength(steps + 1);
    expect(requests.every((r) => r.status === 200 && r.promptTokens < 4096)).toBe(true);
    // The last request still carries the user's question verbatim, a note for the folded
    // steps with their arguments, and the newest steps whole.
    const last = JSON.stringify(requests.at(-1)?.messages);
    expect(last).toContain(question);
    expect(last).toContain("Earlier steps of this turn, folded by Fold");
    expect(last).toContain(`page/${steps - 1}?ref=step-${steps - 1}`);
  });

  it("leaves a turn's steps whole past the budget's trigger when its long message keeps a fold over the target", async () => {
    const database = use();
    const { browser } = await register(database, "tier2-task@example.com");
    const chatId = await newChat(database, browser);
    // The budget the product gives this model (its window as the server reports it).
    const { budget } = await modelBudget(database.db, MODEL);
    // A task long enough that Fold's frame, a full summary and the task are over the target:
    // Tier 1 folds this chat later than the budget's trigger, and Tier 2 trims no sooner.
    const task = `Check each note on the intranet against this plan. ${longMessage(1, 1_900)}`;
    const steps = 12;
    fake.script(
      ...Array.from({ length: steps }, (_, i) => ({
        toolCalls: [{ name: "fetch_url", arguments: { url: `${pages.url}/note/${i}` } }],
      })),
      { text: "Every note follows the plan." },
    );
    const { chunks } = await sendTurn(database, browser, { chatId, modelId: MODEL, text: task });
    expect(chunks.filter((c) => c.type === "error")).toEqual([]);

    const requests = fake.requests.filter((r) => !isSummaryRequest(r));
    expect(requests).toHaveLength(steps + 1);
    const trimmed = (request: RecordedRequest) =>
      /omitted: [\d,]+ chars|chars cut to fit the context window|Earlier steps of this turn/.test(
        JSON.stringify(request.messages),
      );
    // Steps went out whole past the budget's trigger; Tier 2 trimmed later, before the input budget.
    const wholePast = requests.filter((r) => r.promptTokens >= budget.trigger && !trimmed(r));
    expect(wholePast.length).toBeGreaterThan(0);
    expect(requests.some(trimmed)).toBe(true);
    expect(requests.every((r) => r.promptTokens <= budget.inputBudget)).toBe(true);
    expect(requests.every((r) => r.status === 200)).toBe(true);
  });
});
