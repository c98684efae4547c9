import { expect, type Page, test } from "@playwright/test";
import { SMALL_WINDOW } from "../helpers/fake-provider";
import { hydrated, prose, registerUser, send } from "./helpers";
import { ownServerPerFile } from "./own-server";
import { STOP_COMPACTION_PORT } from "./servers";

/**
 * Stop while a turn compacts, as a user sees it: the turn ends within moments (not when the
 * summarizer would have answered) and the page shows what is stored, as a reload does: the
 * message unanswered, with Retry, and the fold's entry when the fold was stored before the
 * stop. A server of its own: Tier 1 inside the turn, one instance.
 */

const MAX_TURNS = 14;
/** Far longer than the test waits: only Stop can end a compaction this slow. */
const SLOW_SUMMARY_MS = 120_000;

const own = ownServerPerFile({
  port: STOP_COMPACTION_PORT,
  provider: { ...SMALL_WINDOW, summaryDelayMs: SLOW_SUMMARY_MS },
  env: { COMPACTION_BACKGROUND: "false" },
});

const trace = (page: Page) => page.getByTestId("compaction-trace");
const replies = (page: Page) => page.locator("[data-role='assistant']", { hasText: "Fake reply" });

/** Three long turns: something to fold, still under the trigger (no turn compacts by itself). */
async function threeLongTurns(page: Page) {
  for (let turn = 0; turn < 3; turn++) {
    await send(page, prose(`Request ${turn + 1}: keep track of item ${turn + 1}.`, turn, 245));
    await expect(replies(page)).toHaveCount(turn + 1, { timeout: 30_000 });
  }
}

/** Compact now from the page's ring (a large drop asks first); answers the ring, compacting. */
async function startCompactNow(page: Page) {
  const ring = page.getByTestId("context-ring");
  await expect(ring).not.toContainText("compacting…");
  await ring.click();
  const confirm = page.getByRole("alertdialog", { name: "Compact this chat now?" });
  await expect(confirm.or(ring.getByText("compacting…")).first()).toBeVisible();
  if (await confirm.isVisible()) {
    await confirm.getByRole("button", { name: "Compact", exact: true }).click();
    await expect(confirm).toBeHidden();
  }
  await expect(ring).toContainText("compacting…");
  return ring;
}

/** The message the stop left unanswered, as the chat shows it: No reply with Retry, no Stopped reply. */
async function shownUnanswered(page: Page) {
  await expect(page.getByText("No reply.")).toBeVisible({ timeout: 10_000 });
  await expect(page.getByRole("button", { name: "Retry" })).toHaveCount(1);
  await expect(page.getByTestId("stopped")).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Continue" })).toHaveCount(0);
  await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();
}

/** Long turns until one compacts: the request of that turn, its trace running. */
async function turnThatCompacts(page: Page) {
  const running = trace(page).filter({ hasText: "Compacting context" });
  for (let turn = 0; turn < MAX_TURNS; turn++) {
    const before = await replies(page).count();
    const request = page.waitForResponse(
      (r) => r.url().endsWith("/api/chat") && r.request().method() === "POST",
    );
    await send(page, prose(`Request ${turn + 1}: keep track of item ${turn + 1}.`, turn, 245));
    // Either the reply comes, or this turn compacts first and waits for the summarizer.
    await expect(replies(page).nth(before).or(running)).toBeVisible({ timeout: 30_000 });
    if (await running.isVisible()) return { answered: before, response: request };
  }
  throw new Error(`no turn compacted in ${MAX_TURNS} turns`);
}

async function storedMessages(page: Page) {
  const chatId = new URL(page.url()).pathname.split("/").pop();
  const stored = (await (await page.request.get(`${own.url}/api/chats/${chatId}`)).json()) as {
    messages: Array<{ role: string; metadata: { compaction?: boolean } | null }>;
  };
  return stored.messages;
}

test("Stop during a compaction ends it at once; the message shows unanswered, as after a reload, and Retry compacts and answers", async ({
  page,
}) => {
  test.setTimeout(240_000);
  await registerUser(page, "stop-compaction@example.com", own.url);
  const { answered, response } = await turnThatCompacts(page);

  await page.getByRole("button", { name: "Stop" }).click();
  // The server's stopped turn ended the stream (the page did not drop it after waiting).
  expect(await (await response).text()).toContain('"stopped":true');
  // Nothing of the turn is stored, and the page shows just that: no reply, not a Stopped one
  // holding the trace of a compaction that did not happen (a reload would show no such reply).
  await shownUnanswered(page);
  await expect(trace(page)).toHaveCount(0);
  expect((await storedMessages(page)).at(-1)?.role).toBe("user");

  await page.reload();
  await hydrated(page);
  await shownUnanswered(page);
  await expect(trace(page)).toHaveCount(0);

  // With a summarizer that answers, Retry compacts and the reply comes.
  own.fake.configure({ summaryDelayMs: 0 });
  await page.getByRole("button", { name: "Retry" }).click();
  const done = page.locator("[data-testid='compaction-trace'][data-state='done']");
  await expect(done).toHaveAttribute("data-outcome", "summarized", { timeout: 30_000 });
  await expect(replies(page)).toHaveCount(answered + 1, { timeout: 30_000 });
  await expect(page.getByText("No reply.")).toHaveCount(0);
});

test("Stop once the turn's compaction has folded the chat: the fold stays in the timeline and the message shows unanswered, as in a fresh tab; Retry answers after the fold", async ({
  page,
}) => {
  test.setTimeout(240_000);
  // A summarizer that answers after a moment, and a model that then keeps the reply waiting:
  // Stop comes after the fold is stored and before the model has written anything.
  own.fake.configure({ summaryDelayMs: 4_000, scriptSummarizer: false });
  try {
    await registerUser(page, "stop-after-fold@example.com", own.url);
    const { answered } = await turnThatCompacts(page);
    own.fake.script({ fault: "slow", delayMs: SLOW_SUMMARY_MS });
    const folded = page.locator("[data-testid='compaction-trace'][data-outcome='summarized']");
    await expect(folded).toBeVisible({ timeout: 30_000 });
    await expect(replies(page)).toHaveCount(answered);
    await page.getByRole("button", { name: "Stop" }).click();

    // The fold is stored as its own entry after the message, which no reply answers.
    await shownUnanswered(page);
    await expect(folded).toHaveCount(1);
    const stored = await storedMessages(page);
    expect(stored.at(-1)?.metadata?.compaction).toBe(true);
    expect(stored.at(-2)?.role).toBe("user");

    // A fresh page shows the same.
    const fresh = await page.context().newPage();
    await fresh.goto(page.url());
    await hydrated(fresh);
    await shownUnanswered(fresh);
    await expect(
      fresh.locator("[data-testid='compaction-trace'][data-outcome='summarized']"),
    ).toHaveCount(1);
    await fresh.close();

    // Retry, right there, answers the message; the fold stays before the reply, not folded again.
    await page.getByRole("button", { name: "Retry" }).click();
    await expect(replies(page)).toHaveCount(answered + 1, { timeout: 30_000 });
    await expect(page.getByText("No reply.")).toHaveCount(0);
    await expect(trace(page)).toHaveCount(1);
    const after = await storedMessages(page);
    expect(after.at(-2)?.metadata?.compaction).toBe(true);
    expect(after.at(-1)?.role).toBe("assistant");
  } finally {
    own.fake.configure({ summaryDelayMs: 0, scriptSummarizer: true });
  }
});

test("Compact now from the ring can be stopped: the ring comes back, nothing is folded", async ({
  page,
}) => {
  test.setTimeout(120_000);
  own.fake.configure({ summaryDelayMs: SLOW_SUMMARY_MS });
  await registerUser(page, "stop-compact-now@example.com", own.url);
  await threeLongTurns(page);
  const ring = await startCompactNow(page);
  // Its trace runs in the timeline meanwhile, as a turn's compaction does.
  await expect(trace(page)).toHaveAttribute("data-state", "running");
  await expect(trace(page)).toContainText("Compacting context…");
  // The chat is held for the compaction: a message typed meanwhile waits in the box, saying why,
  // rather than being sent, refused and handed back without a word.
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("Sent while compacting");
  await box.press("Enter");
  await expect(page.getByText("Compacting… You can send once it is done.")).toBeVisible();
  await expect(page.getByRole("button", { name: "Send message" })).toBeDisabled();
  await expect(box).toHaveValue("Sent while compacting");

  await page.getByRole("button", { name: "Stop compacting" }).click();
  // Answered at the stop, not when the summarizer would have.
  await expect(page.getByText("Compacting was stopped; the chat is as it was.")).toBeVisible({
    timeout: 10_000,
  });
  await expect(ring).not.toContainText("compacting…");
  await expect(page.getByRole("button", { name: "Stop compacting" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Dismiss" })).toHaveCount(0);
  await expect(trace(page)).toHaveCount(0);
  // Nothing was folded: no summary, and the chat takes the next message at once.
  const chatId = new URL(page.url()).pathname.split("/").pop();
  const context = (await (
    await page.request.get(`${own.url}/api/chats/${chatId}/context`)
  ).json()) as { summarizedMessages: number };
  expect(context.summarizedMessages).toBe(0);
  // The message held meanwhile goes now, and is answered.
  await expect(page.getByText("Compacting… You can send once it is done.")).toHaveCount(0);
  await box.press("Enter");
  await expect(replies(page)).toHaveCount(4, { timeout: 30_000 });
  await expect(
    page.locator("[data-role='user']", { hasText: "Sent while compacting" }),
  ).toHaveCount(1);
  own.fake.configure({ summaryDelayMs: 0 });
});

test("a message sent while another tab compacts the chat is refused with the reason, its text back in the box", async ({
  page,
}) => {
  test.setTimeout(120_000);
  own.fake.configure({ summaryDelayMs: SLOW_SUMMARY_MS });
  await registerUser(page, "compact-other-tab@example.com", own.url);
  await threeLongTurns(page);
  // The same chat in a second tab, which compacts it.
  const other = await page.context().newPage();
  await other.goto(page.url());
  await expect(other.getByTestId("context-ring")).toBeVisible();
  await startCompactNow(other);

  // This tab knows nothing of it: its message waits, is refused, and says why.
  await page.bringToFront();
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("Sent while the other tab compacts");
  await box.press("Enter");
  await expect(page.getByText("This chat is busy")).toBeVisible({ timeout: 20_000 });
  await expect(box).toHaveValue("Sent while the other tab compacts");
  await expect(page.getByText("A reply is being written")).toHaveCount(0);

  await other.getByRole("button", { name: "Stop compacting" }).click();
  await expect(other.getByText("Compacting was stopped; the chat is as it was.")).toBeVisible({
    timeout: 10_000,
  });
  await other.close();
  own.fake.configure({ summaryDelayMs: 0 });
});
