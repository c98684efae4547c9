import { expect, type Page, test } from "@playwright/test";
import { SMALL_WINDOW } from "../helpers/fake-provider";
import { prose, registerUser, send } from "./helpers";
import { ownServerPerFile } from "./own-server";
import { BACKGROUND_PORT } from "./servers";

/**
 * Compaction off the critical path, as a user sees it (issue 13): after a reply that leaves
 * the next turn over the trigger, the chat folds in the background. Its trace runs live in
 * the open chat while the composer stays free, a message sent meanwhile is answered without
 * waiting for the summarizer, and the finished trace stays in the timeline after a reload.
 * A server of its own (the main e2e server keeps background compaction off), one instance.
 */

const MAX_TURNS = 14;
/** A summarizer as slow as a real one: long enough to watch and to send a message meanwhile. */
const SUMMARY_DELAY_MS = 12_000;

const own = ownServerPerFile({
  port: BACKGROUND_PORT,
  // A second model to switch to (the last test); chats start on the first.
  provider: {
    ...SMALL_WINDOW,
    models: [...SMALL_WINDOW.models, { id: "other", maxModelLen: 4096 }],
    summaryDelayMs: SUMMARY_DELAY_MS,
  },
  env: { COMPACTION_BACKGROUND: "true" },
});

const trace = (page: Page) => page.getByTestId("compaction-trace");
const replies = (page: Page) => page.locator("[data-role='assistant']", { hasText: "Fake reply" });

test("a background compaction shows live in the open chat, never blocks the composer, and stays", async ({
  page,
}) => {
  test.setTimeout(240_000);
  await registerUser(page, "background-e2e@example.com", own.url);
  const box = page.getByRole("textbox", { name: "Message" });

  let running = false;
  for (let turn = 0; turn < MAX_TURNS && !running; turn++) {
    const before = await replies(page).count();
    await send(page, prose(`Request ${turn + 1}: keep track of item ${turn + 1}.`, turn, 245));
    await expect(replies(page)).toHaveCount(before + 1, { timeout: 30_000 });
    await expect(box).toBeEnabled({ timeout: 30_000 });
    running = await trace(page)
      .filter({ hasText: "Compacting context" })
      .waitFor({ timeout: 3_000 })
      .then(
        () => true,
        () => false,
      );
  }
  expect(running, `no reply crossed the trigger in ${MAX_TURNS} turns`).toBe(true);
  // No turn waited for a summarizer: the only trace is the background one, running now.
  await expect(trace(page)).toHaveCount(1);
  await expect(page.getByTestId("context-ring")).toContainText("compacting");

  // The composer is free: a short message is answered while the summarizer still writes.
  const before = await replies(page).count();
  await send(page, "A short question while you tidy up.");
  await expect(replies(page)).toHaveCount(before + 1, { timeout: 30_000 });
  await expect(trace(page).filter({ hasText: "Compacting context" })).toBeVisible();

  // Then it finishes, and what it folded stays in the timeline.
  const done = page.locator("[data-testid='compaction-trace'][data-state='done']");
  await expect(done).toHaveAttribute("data-outcome", "summarized", {
    timeout: SUMMARY_DELAY_MS + 20_000,
  });
  await page.reload();
  await expect(done).toHaveAttribute("data-outcome", "summarized", { timeout: 20_000 });
});

test("a background compaction that ended before the page could follow it still shows its trace, without a reload", async ({
  page,
}) => {
  test.setTimeout(240_000);
  await registerUser(page, "background-late-e2e@example.com", own.url);
  // The page asks for the live trace only once the compaction is over (the server then has
  // nothing to stream), as on a slow connection or with a summarizer quicker than the page.
  await page.route("**/api/chats/*/compaction", async (route) => {
    await new Promise((resolve) => setTimeout(resolve, SUMMARY_DELAY_MS + 4_000));
    await route.continue().catch(() => undefined);
  });
  const box = page.getByRole("textbox", { name: "Message" });
  // Whether the server is compacting the chat now (the page cannot show it: it is held back).
  const compactingNow = async () => {
    const chatId = new URL(page.url()).pathname.split("/").pop();
    const context = await page.request.get(`${own.url}/api/chats/${chatId}/context`);
    return ((await context.json()) as { compacting?: boolean }).compacting === true;
  };
  let compacting = false;
  for (let turn = 0; turn < MAX_TURNS && !compacting; turn++) {
    await send(page, prose(`Request ${turn + 1}: keep track of item ${turn + 1}.`, turn, 245));
    const reply = page.locator("[data-role='assistant']", {
      hasText: `Fake reply to: Request ${turn + 1}:`,
    });
    await expect(reply).toBeVisible({ timeout: 30_000 });
    await expect(box).toBeEnabled({ timeout: 30_000 });
    compacting = await compactingNow();
  }
  expect(compacting, `no reply crossed the trigger in ${MAX_TURNS} turns`).toBe(true);
  const done = page.locator("[data-testid='compaction-trace'][data-state='done']");
  await expect(done).toHaveAttribute("data-outcome", "summarized", {
    timeout: SUMMARY_DELAY_MS + 20_000,
  });
  await expect(page.getByTestId("context-ring")).not.toContainText("compacting");
});

test("the live compaction card goes when the reading for another model picked meanwhile says it is over", async ({
  page,
}) => {
  test.setTimeout(240_000);
  await registerUser(page, "background-switch-e2e@example.com", own.url);
  const box = page.getByRole("textbox", { name: "Message" });
  const live = trace(page).filter({ hasText: "Compacting context" });
  let running = false;
  for (let turn = 0; turn < MAX_TURNS && !running; turn++) {
    const before = await replies(page).count();
    await send(page, prose(`Request ${turn + 1}: keep track of item ${turn + 1}.`, turn, 245));
    await expect(replies(page)).toHaveCount(before + 1, { timeout: 30_000 });
    await expect(box).toBeEnabled({ timeout: 30_000 });
    running = await live.waitFor({ timeout: 3_000 }).then(
      () => true,
      () => false,
    );
  }
  expect(running, `no reply crossed the trigger in ${MAX_TURNS} turns`).toBe(true);

  // The other model's reading comes back saying nothing compacts any more (the compaction ended
  // while the page switched).
  await page.route("**/api/chats/*/context?*", async (route) => {
    const modelId = new URL(route.request().url()).searchParams.get("modelId");
    if (modelId !== "fake:other") return route.continue();
    const response = await route.fetch();
    const body = (await response.json()) as Record<string, unknown>;
    await route.fulfill({ response, json: { ...body, compacting: false } });
  });
  await page.getByLabel("Model").selectOption("fake:other");
  await expect(live).toHaveCount(0, { timeout: 10_000 });
  await expect(page.getByTestId("context-ring")).not.toContainText("compacting");
  // A read still being rewritten is let go (unroute alone answers it, and its handler then
  // failed with "Route is already handled").
  await page.unrouteAll({ behavior: "ignoreErrors" });
});
