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
const SUMMARY_DELAY_MS = 6_000;

const own = ownServerPerFile({
  port: BACKGROUND_PORT,
  provider: { ...SMALL_WINDOW, summaryDelayMs: SUMMARY_DELAY_MS },
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
