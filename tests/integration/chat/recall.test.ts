import { eq } from "drizzle-orm";
import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible server with a 4,096-token window; it also answers as the summarizer.
const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW, { COMPACTION_BACKGROUND: "false" });
});

import { chatRecall, RECALL_READ_CHARS } from "@/lib/chat/recall";
import { serializeMessage } from "@/lib/compaction/serialize";
import type { Database } from "@/lib/db/client";
import { appendMessage } from "@/lib/db/queries/messages";
import { coveredMessagesMatching } from "@/lib/db/queries/recall";
import { chat, type Message } from "@/lib/db/schema";
import { COMPACTION_TRACE_TOOL_NAME, type FoldUIMessage } from "@/lib/message/ui-message";
import { contentText } from "../../fixtures/fake-openai/request";
import { register } from "../../helpers/auth";
import { chatRow, compactNowCall, historyOf, isSummaryRequest } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import type { Browser } from "../../helpers/http";
import { longMessage, newChat, sendTurn } from "../../helpers/turns";

const MODEL = "fake:small";
/** A value planted in the chat's first message: found again only by reading that message. */
const DEPLOY_KEY = "dk-7f3a9c2e41d8b05";
const RUNBOOK = "/srv/runbooks/harbor-cutover.md";

afterAll(() => fake.close());
beforeEach(() => fake.reset());

/** A stored message of `chatId`, appended as a turn would store it. */
function append(database: Database, chatId: string, role: Message["role"], parts: unknown[]) {
  return appendMessage(database.db, chatId, {
    id: `m-${crypto.randomUUID()}`,
    role,
    parts,
    metadata: null,
  });
}

const text = (value: string) => [{ type: "text", text: value }];

/** A PNG's base64 of some kilobytes that holds `word` once, as a screenshot's data may by chance. */
const imageData = (word: string) =>
  `iVBORw0KGgoAAAANSUhEUgAA${"x7Pq+9Zk/Wd3".repeat(200)}${word}${"Jm0vT2+hYc8s".repeat(200)}AAAAAElFTkSuQmCC`;

/** Marks the chat's messages up to `watermark` as covered by a summary (what a fold commits). */
async function coverUpTo(database: Database, chatId: string, watermark: string) {
  await database.db
    .update(chat)
    .set({
      contextSummary: "## Summary\nEarlier work on the harbor cutover.",
      summaryWatermark: watermark,
    })
    .where(eq(chat.id, chatId));
}

/**
 * A turn whose model calls recall with `query` and then answers `reply`: the chat requests the
 * fake server has seen (summaries aside), and the tool's result as the model's last request
 * carries it (its last tool message).
 */
async function turnCallingRecall(
  database: Database,
  browser: Browser,
  chatId: string,
  turn: { query: string; text: string; reply: string },
) {
  fake.script(
    { toolCalls: [{ name: "recall", arguments: { query: turn.query } }] },
    { text: turn.reply },
  );
  const { response, chunks } = await sendTurn(database, browser, {
    chatId,
    modelId: MODEL,
    text: turn.text,
  });
  expect(response.status).toBe(200);
  expect(chunks.filter((c) => c.type === "error")).toEqual([]);
  const requests = fake.requests.filter((r) => !isSummaryRequest(r));
  const toolMessage = requests.at(-1)?.messages.findLast((m) => m.role === "tool");
  return { requests, result: JSON.parse(toolMessage ? contentText(toolMessage) : "{}") };
}

describeEachDriver("recall: the model reads what its summary condensed", (use) => {
  it("a model that calls recall in a turn gets the condensed message's own words back", async () => {
    const database = use();
    const { browser } = await register(database, "recall-turn@example.com");
    const chatId = await newChat(database, browser);
    const first = `${longMessage(0)} The deploy key for staging is ${DEPLOY_KEY}; the runbook is ${RUNBOOK}.`;
    await sendTurn(database, browser, { chatId, modelId: MODEL, text: first });
    for (let turn = 1; turn < 5; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);
    const state = await chatRow(database.db, chatId);
    const rows = await historyOf(database.db, chatId);
    const firstRow = rows.find((r) => r.role === "user");
    const watermarkSeq = rows.find((r) => r.id === state.summaryWatermark)?.seq ?? -1;
    // The first message is condensed: the model's view no longer holds it as written.
    expect(firstRow && firstRow.seq <= watermarkSeq).toBe(true);

    const { result } = await turnCallingRecall(database, browser, chatId, {
      query: "deploy key staging",
      text: "What exactly was the staging deploy key I gave you at the start?",
      reply: `The staging deploy key is ${DEPLOY_KEY}.`,
    });
    // The model's second request carries the tool's answer: the first message, by number.
    expect(result.matches[0]).toMatchObject({ message: (firstRow?.seq ?? -1) + 1, role: "user" });
    expect(result.matches[0].excerpt).toContain(`The deploy key for staging is ${DEPLOY_KEY}`);

    // The stored reply keeps the call and its output, as any tool's.
    const reply = (await historyOf(database.db, chatId)).at(-1);
    const recallPart = ((reply?.parts ?? []) as Array<Record<string, unknown>>).find(
      (p) => p.type === "tool-recall",
    );
    expect(recallPart?.state).toBe("output-available");
    expect(JSON.stringify(recallPart?.output)).toContain(DEPLOY_KEY);
  });

  it("searches only the messages the summary covers, of its own chat, tool calls and outputs included", async () => {
    const database = use();
    const { browser } = await register(database, "recall-scope@example.com");
    const chatId = await newChat(database, browser);
    const asked = await append(database, chatId, "user", text("Read the cutover page."));
    const fetched = await append(database, chatId, "assistant", [
      {
        type: "tool-fetch_url",
        toolCallId: "call-1",
        state: "output-available",
        input: { url: "https://intranet.example/cutover?rev=e41d8b05aa" },
        output: { status: 200, text: `Step 4: rotate the key, then read ${RUNBOOK} again.` },
      },
      { type: "text", text: "The page lists six steps." },
    ]);
    const later = await append(database, chatId, "user", text(`Is ${RUNBOOK} current?`));
    await coverUpTo(database, chatId, fetched.id);
    // Another user's chat holds the same path: never reachable from this one.
    const { browser: other } = await register(database, "recall-other@example.com");
    const otherChat = await newChat(database, other);
    const theirs = await append(database, otherChat, "user", text(`My runbook: ${RUNBOOK}`));
    await coverUpTo(database, otherChat, theirs.id);

    const recall = chatRecall(database.db, chatId);
    const byPath = await recall.search(RUNBOOK);
    expect(byPath.covered).toBe(`1-${fetched.seq + 1}`);
    // The tool output matched; the later message holds the path too but is in the view as written.
    expect(byPath.matches.map((m) => m.message)).toEqual([fetched.seq + 1]);
    expect(byPath.matches[0]?.excerpt).toContain(RUNBOOK);
    const byArgument = await recall.search("e41d8b05aa");
    expect(byArgument.matches.map((m) => m.message)).toEqual([fetched.seq + 1]);
    expect(byArgument.matches[0]?.excerpt).toContain("rev=e41d8b05aa");
    // The words together first (case aside), then a message holding each of them apart.
    const byWords = await recall.search("Cutover PAGE");
    expect(byWords.matches.map((m) => m.message)).toEqual([asked.seq + 1, fetched.seq + 1]);
    const none = await recall.search("no such words anywhere");
    expect(none.matches).toEqual([]);
    expect(none.note).toMatch(/No condensed message/);

    expect(await recall.read(later.seq + 1, 0)).toEqual({
      covered: `1-${fetched.seq + 1}`,
      note: `Message ${later.seq + 1} is not condensed: it is in the conversation as written.`,
    });
    expect((await recall.read(99, 0)).note).toBe("This chat has no message 99.");
    // A message past the summary that the turn's view sends cut is reachable as a condensed one.
    const cutLater = chatRecall(database.db, chatId, { cutInView: () => new Set([later.id]) });
    expect(await cutLater.read(later.seq + 1, 0)).toMatchObject({ message: later.seq + 1 });
    expect((await cutLater.search(RUNBOOK)).matches.map((m) => m.message)).toEqual([
      later.seq + 1,
      fetched.seq + 1,
    ]);
    const read = await recall.read(asked.seq + 1, 0);
    expect(read).toMatchObject({ message: asked.seq + 1, role: "user" });
    expect(read.text).toContain("Read the cutover page.");
  });

  it("finds an old condensed message by the rare words of a question, past hundreds of newer ones", async () => {
    const database = use();
    const { browser } = await register(database, "recall-rare-words@example.com");
    const chatId = await newChat(database, browser);
    const planted = await append(
      database,
      chatId,
      "user",
      text("For the record: the staging database listens on port 5433."),
    );
    // Hundreds of newer messages, all holding the question's common words ("which", "the",
    // "for"), none its rare ones.
    let last = planted;
    for (let i = 0; i < 300; i++) {
      last = await append(
        database,
        chatId,
        i % 2 ? "assistant" : "user",
        text(`Step ${i}: which of the files is next for the review? The tests pass.`),
      );
    }
    await coverUpTo(database, chatId, last.id);

    const found = await chatRecall(database.db, chatId).search(
      "which port for the staging database",
    );
    expect(found.matches[0]?.message).toBe(planted.seq + 1);
    expect(found.matches[0]?.excerpt).toContain("port 5433");
    // Only words every message holds: nothing condensed holds what was asked for.
    const common = await chatRecall(database.db, chatId).search("which of the files");
    expect(common.matches.map((m) => m.message)).not.toContain(planted.seq + 1);
  });

  it("searches what a reader would: words, a file's name, tool calls and outputs, never a file's data or the JSON around them", async () => {
    const database = use();
    const { browser } = await register(database, "recall-readable@example.com");
    const chatId = await newChat(database, browser);
    const photo = await append(database, chatId, "user", [
      ...text("Here is the photo of the north quay."),
      {
        type: "file",
        mediaType: "image/png",
        filename: "north-quay.png",
        url: `data:image/png;base64,${imageData("QuayLime")}`,
        providerMetadata: { gateway: { assetTag: "marlin42" } },
      },
    ]);
    const fetched = await append(database, chatId, "assistant", [
      { type: "reasoning", text: "The tide table should settle it; bollard9 is a guess." },
      {
        type: "tool-fetch_url",
        toolCallId: "call-kestrel77",
        state: "output-available",
        input: { url: "https://intranet.example/tide" },
        output: { status: 200, text: "High water at 06:12; mooring marker QL-55." },
        callProviderMetadata: { openai: { itemId: "fc-osprey31" } },
      },
    ]);
    await coverUpTo(database, chatId, fetched.id);
    const recall = chatRecall(database.db, chatId);
    const found = async (query: string) =>
      (await recall.search(query)).matches.map((m) => m.message);

    expect(await found("north quay")).toEqual([photo.seq + 1]);
    expect(await found("north-quay.png")).toEqual([photo.seq + 1]);
    expect(await found("QL-55")).toEqual([fetched.seq + 1]);
    expect(await found("intranet.example/tide")).toEqual([fetched.seq + 1]);
    // Inside the image's base64 only: no match.
    expect(await found("quaylime")).toEqual([]);
    // Nor does the database hand over, as candidates, messages that hold a term only in a
    // file's data, a call id, provider metadata, a key, a part type or the model's reasoning.
    const { rows } = await coveredMessagesMatching(database.db, chatId, {
      coveredSeq: fetched.seq,
      terms: [
        "quaylime",
        "kestrel77",
        "marlin42",
        "osprey31",
        "toolcallid",
        "mediatype",
        "output-available",
        "bollard9",
      ],
      limit: 10,
    });
    expect(rows.map((row) => row.seq)).toEqual([]);
  });

  it("searches, of each part, the words a reader would: a steering message's, a call's name, arguments, output, error and denial", async () => {
    const database = use();
    const { browser } = await register(database, "recall-parts@example.com");
    const chatId = await newChat(database, browser);
    const stored = await append(database, chatId, "assistant", [
      { type: "step-start" },
      {
        type: "tool-read_file",
        toolCallId: "call-1",
        state: "output-error",
        input: { path: "/etc/harbor.conf", lines: [10, 20] },
        errorText: "permission denied",
      },
      {
        type: "dynamic-tool",
        toolName: "shell",
        toolCallId: "call-2",
        state: "output-denied",
        input: { command: "rm -rf /tmp/harbor" },
        approval: { id: "approval-1", approved: false, reason: "too risky" },
      },
      {
        type: "steering-message",
        parts: [
          { type: "text", text: "Use the backup instead." },
          { type: "file", mediaType: "text/csv", url: "https://files.example/backup.csv" },
        ],
      },
      {
        type: "tool-fetch_url",
        toolCallId: "call-3",
        state: "input-streaming",
        input: { url: "https://stream" },
      },
      {
        type: `tool-${COMPACTION_TRACE_TOOL_NAME}`,
        toolCallId: "trace-1",
        state: "output-available",
        input: {},
        output: { outcome: "summarized" },
      },
      { type: "data-usage", data: { note: "not for the reader" } },
      { type: "text", text: "Done." },
    ]);
    await coverUpTo(database, chatId, stored.id);

    const { rows } = await coveredMessagesMatching(database.db, chatId, {
      coveredSeq: stored.seq,
      terms: ["harbor"],
      limit: 10,
    });
    // One field a line, grouped by field.
    expect(rows.map((row) => row.searched.split("\n").sort())).toEqual([
      [
        "read_file",
        "permission denied",
        "/etc/harbor.conf",
        "10",
        "20",
        "shell",
        "too risky",
        "rm -rf /tmp/harbor",
        "Use the backup instead.",
        "text/csv",
        "https://files.example/backup.csv",
        "Done.",
      ].sort(),
    ]);
    // A query Postgres could not even be sent (a NUL) finds nothing, as no stored text holds one.
    expect((await chatRecall(database.db, chatId).search("harbor\u0000")).matches).toEqual([]);
  });

  it("finds the one message that says a word though most messages' images hold it in their data", async () => {
    const database = use();
    const { browser } = await register(database, "recall-image-data@example.com");
    const chatId = await newChat(database, browser);
    const planted = await append(
      database,
      chatId,
      "user",
      text("For the record: the staging database listens on port 5433."),
    );
    // Base64 holds most short words somewhere, in some case; here every screenshot holds "PoRt".
    let last = planted;
    for (let i = 0; i < 24; i++) {
      last = await append(database, chatId, "user", [
        ...text(`Screenshot ${i} of the dashboard.`),
        { type: "file", mediaType: "image/png", url: `data:image/png;base64,${imageData("PoRt")}` },
      ]);
    }
    await coverUpTo(database, chatId, last.id);

    const found = await chatRecall(database.db, chatId).search("which port");
    expect(found.matches.map((m) => m.message)).toEqual([planted.seq + 1]);
    expect(found.matches[0]?.excerpt).toContain("port 5433");
  });

  it("finds a Turkish word whatever its case, the dotted capital İ included", async () => {
    const database = use();
    const { browser } = await register(database, "recall-turkish@example.com");
    const chatId = await newChat(database, browser);
    const planted = await append(
      database,
      chatId,
      "user",
      text("Toplantı İSTANBUL ofisinde, İzmir ekibi de katılacak."),
    );
    const other = await append(database, chatId, "user", text("Ankara notları ayrı tutulsun."));
    await coverUpTo(database, chatId, other.id);

    const recall = chatRecall(database.db, chatId);
    for (const query of ["İstanbul", "istanbul", "ISTANBUL", "izmir ekibi"]) {
      const found = await recall.search(query);
      expect(
        found.matches.map((m) => m.message),
        query,
      ).toEqual([planted.seq + 1]);
    }
  });

  it("reaches a tool output the view sends as a placeholder, though no summary covers it", async () => {
    const database = use();
    const { browser } = await register(database, "recall-cut@example.com");
    const chatId = await newChat(database, browser);
    await append(database, chatId, "user", text("Read the four cutover pages."));
    // Four bulky results: the oldest has three newer ones after it, so Stage 0 sends it as a
    // placeholder, while the chat is far from a fold.
    const pages = [0, 1, 2, 3].map((k) => ({
      type: "tool-fetch_url",
      toolCallId: `page-${k}`,
      state: "output-available",
      input: { url: `https://intranet.example/cutover/${k}` },
      output: {
        status: 200,
        text: `${k === 0 ? `The cutover code is ${DEPLOY_KEY}. ` : ""}${longMessage(k, 260)}`,
      },
    }));
    await append(database, chatId, "assistant", [...pages, ...text("I read all four pages.")]);

    const { requests, result } = await turnCallingRecall(database, browser, chatId, {
      query: "cutover code",
      text: "What was the cutover code on the first page?",
      reply: `The cutover code is ${DEPLOY_KEY}.`,
    });
    const [asked] = requests;
    // The premise: no summary, and the first request does not hold the code (a placeholder).
    expect((await chatRow(database.db, chatId)).contextSummary).toBeNull();
    expect(JSON.stringify(asked?.messages)).not.toContain(DEPLOY_KEY);
    expect(JSON.stringify(asked?.messages)).toContain("omitted");
    // The tool's answer carries the stored output's words.
    expect(result.matches?.[0]?.excerpt).toContain(`The cutover code is ${DEPLOY_KEY}`);
  });

  it("reads a long message in pieces that join up to the whole", async () => {
    const database = use();
    const { browser } = await register(database, "recall-long@example.com");
    const chatId = await newChat(database, browser);
    const long = Array.from({ length: 900 }, (_, i) => `line ${i}: ${"value ".repeat(3)}`).join(
      "\n",
    );
    const stored = await append(database, chatId, "user", text(long));
    await coverUpTo(database, chatId, stored.id);
    const whole = serializeMessage(
      { id: stored.id, role: "user", parts: text(long) } as FoldUIMessage,
      {
        toolOutputChars: Number.POSITIVE_INFINITY,
      },
    );
    expect(whole.length).toBeGreaterThan(2 * RECALL_READ_CHARS);

    const recall = chatRecall(database.db, chatId);
    let joined = "";
    let offset: number | undefined = 0;
    let reads = 0;
    while (offset !== undefined) {
      const piece = await recall.read(stored.seq + 1, offset);
      joined += piece.text ?? "";
      offset = piece.nextOffset;
      reads += 1;
    }
    expect(joined).toBe(whole);
    expect(reads).toBe(Math.ceil(whole.length / RECALL_READ_CHARS));
  });

  it("says so when nothing is condensed yet", async () => {
    const database = use();
    const { browser } = await register(database, "recall-none@example.com");
    const chatId = await newChat(database, browser);
    const stored = await append(database, chatId, "user", text(`The runbook is ${RUNBOOK}.`));
    const recall = chatRecall(database.db, chatId);
    const searched = await recall.search(RUNBOOK);
    expect(searched).toMatchObject({ covered: null, matches: [] });
    expect(searched.note).toMatch(/Nothing in this chat is condensed yet/);
    expect(await recall.read(stored.seq + 1, 0)).toMatchObject({ covered: null });
  });
});
