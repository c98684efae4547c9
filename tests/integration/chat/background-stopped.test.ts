import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A compaction summarizing in the background (DESIGN §16) when its chat is deleted, or its
// owner's account disabled: it stops at its provider, as a turn's model call does, and writes
// nothing.
const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW, { COMPACTION_BACKGROUND: "true" });
});

import { eq } from "drizzle-orm";
import * as adminUserRoute from "@/app/api/admin/users/[id]/route";
import type { Database } from "@/lib/db/client";
import { listCompactionEvents } from "@/lib/db/queries/compaction-events";
import { chat as chatTable } from "@/lib/db/schema";
import { register, sessionOf, signIn } from "../../helpers/auth";
import { fillUntil, isSummaryRequest } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { compactionSettled } from "../../helpers/db";
import { type Browser, call } from "../../helpers/http";
import { deleteChat, newChat } from "../../helpers/turns";
import { eventually } from "../../helpers/ui-stream";

const MODEL = "fake:small";
/** Long enough that the summarizer is still writing when the chat goes. */
const SLOW_SUMMARY_MS = 10_000;

afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  fake.configure({ chunkDelayMs: 0, summaryDelayMs: 0 });
});

/** Long turns until a turn ends with a compaction running behind it; its summarizer's request. */
async function untilFoldingBehind(database: Database, browser: Browser, chatId: string) {
  fake.configure({ summaryDelayMs: SLOW_SUMMARY_MS });
  await fillUntil("due", database, browser, chatId, MODEL);
  return eventually(async () => fake.requests.find(isSummaryRequest), 5_000);
}

/** The admin: the first account a database has, whichever test comes first. */
async function admin(database: Database): Promise<Browser> {
  const made = await register(database, "bg-admin@example.com");
  return made.response.ok ? made.browser : (await signIn(database, "bg-admin@example.com")).browser;
}

describeEachDriver("a compaction running in the background", (use) => {
  it("stops at its provider when its chat is deleted", async () => {
    const database = use();
    await admin(database);
    const { browser } = await register(database, "bg-deleted@example.com");
    const chatId = await newChat(database, browser);
    const summarizing = await untilFoldingBehind(database, browser, chatId);
    const deleted = await deleteChat(database, browser, chatId);
    expect(deleted.status).toBe(204);
    // Well before the summarizer would have answered: it was not left writing for nobody.
    await eventually(async () => summarizing.abortedAt !== null, SLOW_SUMMARY_MS / 2);
  });

  it("stops at its provider when its owner's account is disabled, and writes nothing into the chat", async () => {
    const database = use();
    const adminBrowser = await admin(database);
    const { browser } = await register(database, "bg-disabled@example.com");
    const userId = (await sessionOf(database, browser))?.user.id ?? "";
    const chatId = await newChat(database, browser);
    const summarizing = await untilFoldingBehind(database, browser, chatId);
    const [before] = await database.db.select().from(chatTable).where(eq(chatTable.id, chatId));
    const eventsBefore = (await listCompactionEvents(database.db, chatId)).length;

    const disabled = await call(database, adminUserRoute.PATCH, {
      path: `/api/admin/users/${userId}`,
      method: "PATCH",
      params: { id: userId },
      body: { status: "disabled" },
      browser: adminBrowser,
    });
    expect(disabled.status).toBe(200);
    await eventually(async () => summarizing.abortedAt !== null, SLOW_SUMMARY_MS / 2);
    await compactionSettled(database.db, chatId);
    const [after] = await database.db.select().from(chatTable).where(eq(chatTable.id, chatId));
    expect(after?.contextSummary).toBe(before?.contextSummary);
    expect(after?.summaryWatermark).toBe(before?.summaryWatermark);
    expect(await listCompactionEvents(database.db, chatId)).toHaveLength(eventsBefore);
  });
});
