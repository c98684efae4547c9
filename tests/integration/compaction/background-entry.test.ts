import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A background fold's timeline entry and its summary are one write (DESIGN §16): an edit that
// lands right after the fold commits finds both or neither, never the entry without the summary.
const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW, { COMPACTION_BACKGROUND: "true" });
});

/** Run once, right after the next fold's commit returns, before its caller goes on. */
const afterFold = vi.hoisted(() => ({ run: undefined as (() => Promise<void>) | undefined }));

vi.mock("@/lib/chat/commit-tier1", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/chat/commit-tier1")>();
  return {
    ...actual,
    commitTier1: async (...args: Parameters<typeof actual.commitTier1>) => {
      const committed = await actual.commitTier1(...args);
      const run = afterFold.run;
      afterFold.run = undefined;
      await run?.();
      return committed;
    },
  };
});

import { getChat } from "@/lib/db/queries/chats";
import { listCompactionEvents } from "@/lib/db/queries/compaction-events";
import { loadHistory } from "@/lib/db/queries/messages";
import { register } from "../../helpers/auth";
import { fillUntil, isTraceEntry } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { compactionSettled } from "../../helpers/db";
import { newChat, postTurn } from "../../helpers/turns";
import { readChunks } from "../../helpers/ui-stream";

const MODEL = "fake:small";

afterAll(() => fake.close());
beforeEach(() => fake.reset());

describeEachDriver("a background fold's timeline entry", (use) => {
  it("goes with its summary: an edit of the opening message landing right after the fold leaves no entry for a fold the chat no longer has", async () => {
    const database = use();
    const { browser } = await register(database, "background-entry@example.com");
    const chatId = await newChat(database, browser);
    // The summarizer is slow, so the chat is still folding when the filling turns end.
    fake.configure({ summaryDelayMs: 1_500 });
    let edited = false;
    afterFold.run = async () => {
      const [opening] = await loadHistory(database.db, chatId);
      if (!opening) throw new Error("no opening message");
      const edit = await postTurn(database, browser, {
        chatId,
        modelId: MODEL,
        id: opening.id,
        text: "A different opening question.",
      });
      expect(edit.status).toBe(200);
      await readChunks(edit);
      edited = true;
    };
    try {
      await fillUntil("due", database, browser, chatId, MODEL);
      await compactionSettled(database.db, chatId);
    } finally {
      fake.configure({ summaryDelayMs: 0 });
    }
    expect(edited).toBe(true);

    // The fold landed, then the edit took the chat back before it: no summary, and the chat
    // shows the edited opening and its reply, with no entry telling of the fold.
    const chat = await getChat(database.db, chatId);
    expect(chat?.contextSummary).toBeNull();
    const shown = await loadHistory(database.db, chatId);
    expect(shown.filter(isTraceEntry)).toEqual([]);
    expect(shown.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(JSON.stringify(shown[0]?.parts)).toContain("A different opening question.");
    // The fold itself happened: its event is kept with the version it folded.
    const events = await listCompactionEvents(database.db, chatId);
    expect(events.map((e) => e.outcome)).toContain("summarized");
  });
});
