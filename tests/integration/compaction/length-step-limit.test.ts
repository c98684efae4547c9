import { afterAll, expect, it, vi } from "vitest";

// TURN_MAX_STEPS is read once per process, hence a file of its own: a turn may take 3 steps.
const { fake, pages } = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  const { startPageServer } = await import("../../helpers/page-server");
  const server = await startFakeProvider(
    { models: [{ id: "small", maxModelLen: 4096 }] },
    { FETCH_URL_ALLOW_PRIVATE: "1", COMPACTION_BACKGROUND: "false", TURN_MAX_STEPS: "3" },
  );
  const pages = await startPageServer((path) => ({
    body: `<!doctype html><html><head><title>Notes</title></head><body><p>Notes at ${path}.</p></body></html>`,
  }));
  return { fake: server, pages };
});

import { loadHistory } from "@/lib/db/queries/messages";
import { register } from "../../helpers/auth";
import { isSummaryRequest } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { newChat, sendTurn } from "../../helpers/turns";

afterAll(async () => {
  await fake.close();
  await pages.close();
});

const fetchStep = (page: number) => ({
  toolCalls: [{ name: "fetch_url", arguments: { url: `${pages.url}/notes/${page}` } }],
});

describeEachDriver("a window-cut retry that keeps its finished steps", (use) => {
  it("gets only the steps the turn has left", async () => {
    const database = use();
    const { browser } = await register(database, "length-step-limit@example.com");
    const chatId = await newChat(database, browser);
    fake.reset();
    pages.visits.length = 0;
    fake.script(
      fetchStep(1),
      // The window cuts the second step; the retry goes on after the first.
      { text: "word ".repeat(4000) },
      fetchStep(2),
      fetchStep(3),
      { text: "Past the turn's last step." },
    );
    const { chunks } = await sendTurn(database, browser, {
      chatId,
      modelId: "fake:small",
      text: "Read the notes, page by page.",
    });
    expect(chunks.some((c) => c.type === "error")).toBe(false);
    const marker = chunks.find((c) => c.type === "data-fold-retry") as
      | { data?: { keepsSteps?: boolean } }
      | undefined;
    expect(marker?.data?.keepsSteps).toBe(true);

    // One step before the cut, two after it: three in all, the turn's limit. The model was not
    // asked a fourth time, so the scripted answer after the third fetch is never given.
    expect(pages.visits).toEqual(["/notes/1", "/notes/2", "/notes/3"]);
    const chatRequests = fake.requests.filter((r) => !isSummaryRequest(r) && r.status === 200);
    expect(chatRequests).toHaveLength(4);
    expect(fake.pendingScript).toBe(1);
    const reply = (await loadHistory(database.db, chatId)).at(-1);
    const metadata = reply?.metadata as { stats: { steps: number } } | undefined;
    expect(metadata?.stats.steps).toBe(3);
  });
});
