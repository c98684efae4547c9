import { afterAll, beforeEach, expect, it, vi } from "vitest";

// COMPACTION_ENABLED=false switches Tier 1 and Tier 2 off; recovery must stay on (DESIGN §10).
// env is read once per process, hence a file of its own. The fake server counts 1.5× o200k
// for the 4,096-token model, so Fold's estimate under-counts what the provider sees.
const { fake, pages } = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  const { startPageServer } = await import("../../helpers/page-server");
  const server = await startFakeProvider(
    {
      models: [
        { id: "small", maxModelLen: 4096, tokenScale: 1.5 },
        { id: "mid", maxModelLen: 8192, tokenScale: 1 },
      ],
      replyTokens: 120,
    },
    {
      COMPACTION_ENABLED: "false",
      FETCH_URL_ALLOW_PRIVATE: "1",
    },
  );

  const words = ["river", "mountain", "archive", "ledger", "harbor", "signal", "orchard", "copper"];
  const pages = await startPageServer((path) => {
    const n = Number(/\/page\/(\d+)/.exec(path)?.[1] ?? 0);
    const lines: string[] = [];
    for (let p = 0; lines.join("\n").length < 12_000; p++) {
      lines.push(
        `Page ${n} line ${p}: ${Array.from({ length: 20 }, (_, i) => `${words[(i + p + n) % words.length]}${(i * 7 + p + n) % 89}`).join(" ")}.`,
      );
    }
    return { body: lines.join("\n"), contentType: "text/plain; charset=utf-8" };
  });
  return { fake: server, pages };
});

import * as notesRoute from "@/app/api/chats/[id]/memory/notes/route";
import { chatContext } from "@/lib/chat/context";
import { withDatabase } from "@/lib/db/client";
import { env } from "@/lib/env";
import { register } from "../../helpers/auth";
import {
  chatRow,
  compactNowCall,
  eventsOf,
  historyOf,
  isSummaryRequest,
} from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { call } from "../../helpers/http";
import { longMessage, newChat, sendTurn } from "../../helpers/turns";

afterAll(async () => {
  await fake.close();
  await pages.close();
});
beforeEach(() => fake.reset());

type Chunk = Record<string, unknown>;

function recoveryTraces(chunks: Chunk[]) {
  return chunks
    .filter((c) => c.type === "tool-input-available" && c.toolName === "compact_context")
    .map(
      (start) =>
        chunks.find((c) => c.type === "tool-output-available" && c.toolCallId === start.toolCallId)
          ?.output as Record<string, unknown> | undefined,
    );
}

describeEachDriver("Recovery with COMPACTION_ENABLED=false", (use) => {
  it("is really off: compaction is disabled for this file", () => {
    expect(env().compaction.enabled).toBe(false);
  });

  it("trims and retries an overflowing chat once per turn, and every turn completes", async () => {
    const database = use();
    const MODEL = "fake:small";
    const { browser } = await register(database, "disabled@example.com");
    const chatId = await newChat(database, browser);

    const statusesByTurn: number[][] = [];
    const recovered: Array<"overflow" | "length"> = [];
    for (let n = 0; n < 5; n++) {
      const first = fake.requests.length;
      const { response, chunks } = await sendTurn(database, browser, {
        chatId,
        modelId: MODEL,
        text: longMessage(n, 600),
      });
      expect(response.status).toBe(200);
      const requests = fake.requests.slice(first);
      statusesByTurn.push(requests.map((r) => r.status));
      expect(
        chunks.filter((c) => c.type === "error"),
        `turn ${n}`,
      ).toEqual([]);
      expect(chunks.some((c) => c.type === "finish")).toBe(true);

      const traces = recoveryTraces(chunks);
      if (requests[0]?.status === 400) {
        // One refusal, then the trimmed retry fits.
        expect(requests.map((r) => r.status)).toEqual([400, 200]);
        expect(requests[1]?.promptTokens).toBeLessThanOrEqual(4096);
        expect(traces).toEqual([
          expect.objectContaining({ outcome: "trimmed", reason: "overflow" }),
        ]);
        recovered.push("overflow");
      } else if (requests[0]?.finishReason === "length") {
        // Taken whole, but with no room left for the reply: cut short once, then the trimmed
        // retry answers.
        expect(requests.map((r) => [r.status, r.finishReason])).toEqual([
          [200, "length"],
          [200, "stop"],
        ]);
        expect(requests[1]?.promptTokens).toBeLessThan(requests[0]?.promptTokens ?? 0);
        expect(traces).toEqual([expect.objectContaining({ outcome: "trimmed", reason: "length" })]);
        recovered.push("length");
      } else {
        expect(requests.map((r) => r.status)).toEqual([200]);
        expect(traces).toEqual([]);
      }
    }

    // The history outgrew the window (the whole history goes out with compaction off)…
    expect(statusesByTurn.flat()).toContain(400);
    // …yet no summarizer ever ran and no Tier 1 compaction happened.
    expect(fake.requests.filter(isSummaryRequest)).toEqual([]);
    const events = await eventsOf(database.db, chatId);
    expect(events.length).toBeGreaterThan(0);
    // One event per recovered turn: a refusal's is an overflow, a cut reply's a length.
    expect(events.map((e) => [e.reason, e.outcome])).toEqual(
      recovered.map((reason) => [reason, "skipped"]),
    );
    const row = await chatRow(database.db, chatId);
    expect(row.contextSummary).toBeNull();
    expect(row.compactionDirty).toBe(true);

    // Every turn's reply is stored.
    const history = await historyOf(database.db, chatId);
    expect(history.map((m) => m.role)).toEqual(Array(5).fill(["user", "assistant"]).flat());
  });

  it("still sends what the chat remembers: the user's notes, and the summary a Compact now wrote", async () => {
    const database = use();
    const MODEL = "fake:mid";
    const { browser } = await register(database, "disabled-memory@example.com");
    const chatId = await newChat(database, browser);
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "My cat is called Pixel." });
    const NOTE = "Always answer in British English.";
    const noted = await call(database, notesRoute.POST, {
      path: `/api/chats/${chatId}/memory/notes`,
      method: "POST",
      params: { id: chatId },
      body: { note: NOTE, version: (await chatRow(database.db, chatId)).version },
      browser,
    });
    expect(noted.status).toBe(200);
    const wireText = () =>
      JSON.stringify(fake.requests.filter((r) => !isSummaryRequest(r)).at(-1)?.messages);

    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "What colour is the sky?" });
    expect(wireText()).toContain(NOTE);
    // The whole history still goes: nothing was folded.
    const before = fake.requests.filter((r) => !isSummaryRequest(r)).at(-1)?.messages ?? [];
    expect(before.map((m) => m.content)).toContain("My cat is called Pixel.");

    for (let turn = 0; turn < 4; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    const { contextSummary, summaryWatermark } = await chatRow(database.db, chatId);
    expect(summaryWatermark).not.toBeNull();
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: "And now?" });
    // The summary stands for what it covers, the note with it; the first message is folded.
    const summaryHead = (contextSummary ?? "").split("\n").find((line) => line.trim() !== "") ?? "";
    expect(summaryHead).not.toBe("");
    expect(wireText()).toContain(JSON.stringify(summaryHead).slice(1, -1));
    expect(wireText()).toContain(NOTE);
    const sent = fake.requests.filter((r) => !isSummaryRequest(r)).at(-1)?.messages ?? [];
    expect(sent.map((m) => m.content)).not.toContain("My cat is called Pixel.");
    // The ring says the same: the summary stands for the messages before it.
    const row = await chatRow(database.db, chatId);
    const context = await withDatabase(database, () => chatContext(database.db, row, MODEL));
    expect(context.summarizedMessages).toBeGreaterThan(0);
  });

  it("rescues a tool loop that overflows mid-turn (Tier 2 is off too): one refusal per step at most", async () => {
    const database = use();
    const MODEL = "fake:mid";
    const { browser } = await register(database, "disabled-tools@example.com");
    const chatId = await newChat(database, browser);
    const FETCHES = 5;
    fake.script(
      ...Array.from({ length: FETCHES }, (_, i) => ({
        toolCalls: [{ name: "fetch_url", arguments: { url: `${pages.url}/page/${i}` } }],
      })),
      { text: "Done reading." },
    );
    const { response, chunks } = await sendTurn(database, browser, {
      chatId,
      modelId: MODEL,
      text: "Read the five intranet pages.",
    });
    expect(response.status).toBe(200);
    expect(chunks.filter((c) => c.type === "error")).toEqual([]);
    expect(
      chunks.filter(
        (c) => c.type === "tool-output-available" && !("outcome" in (c.output as object)),
      ),
    ).toHaveLength(FETCHES);
    const answer = chunks
      .filter((c) => c.type === "text-delta")
      .map((c) => c.delta)
      .join("");
    expect(answer).toBe("Done reading.");

    const statuses = fake.requests.map((r) => r.status);
    // Without Tier 2 the loop did overflow; each refusal was followed by a retry that fit.
    expect(statuses).toContain(400);
    statuses.forEach((status, i) => {
      if (status === 400) expect(statuses[i + 1], `request ${i + 1}`).toBe(200);
    });
    expect(statuses.filter((s) => s === 200)).toHaveLength(FETCHES + 1);
    expect(recoveryTraces(chunks)).toHaveLength(statuses.filter((s) => s === 400).length);
    for (const output of recoveryTraces(chunks))
      expect(output).toMatchObject({ outcome: "trimmed", reason: "overflow" });
  });
});
