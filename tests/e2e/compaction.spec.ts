import { expect, type Page, test } from "@playwright/test";
import { hydrated, openNewChat, prose, send } from "./helpers";

// The e2e fake provider serves `small` with a 4,096-token window and waits 1.5 s before
// answering a summarizer request, so the running trace stays on screen (scripts/e2e-server.mjs).
const SMALL_MODEL = "fake:small";
const MAX_TURNS = 14;

/** About 250 words, different on every turn, with a first line naming the turn. */
const longMessage = (turn: number) =>
  prose(`Request ${turn + 1}: please keep track of item ${turn + 1} in the plan.`, turn, 245);

const ring = (page: Page) => page.getByTestId("context-ring");

async function ringFill(page: Page): Promise<number> {
  return Number(await ring(page).getAttribute("data-fill"));
}

/** Waits until the ring shows a fill other than `previous` (it refetches when a reply ends). */
async function nextFill(page: Page, previous: number): Promise<number> {
  await expect.poll(() => ringFill(page), { intervals: [100] }).not.toBe(previous);
  return ringFill(page);
}

/** Like `nextFill`, but a ring that never moves is a soft failure, so the rest still runs. */
async function nextFillSoft(page: Page, previous: number, message: string): Promise<number> {
  await expect
    .configure({ soft: true })
    .poll(() => ringFill(page), { intervals: [100], message })
    .not.toBe(previous);
  return ringFill(page);
}

type Stored = {
  messages: Array<{
    role: string;
    parts: Array<{ type: string }>;
    metadata: { compaction?: boolean } | null;
  }>;
};

/**
 * What the chat has stored: replies (not counting compact-now entries) and finished
 * compaction traces. The timeline is virtualized, so the DOM holds only what is on screen.
 */
async function stored(page: Page): Promise<{ replies: number; traces: number }> {
  const chatId = new URL(page.url()).pathname.split("/").pop();
  const response = await page.request.get(`/api/chats/${chatId}?limit=200`);
  const { messages } = (await response.json()) as Stored;
  return {
    replies: messages.filter((m) => m.role === "assistant" && !m.metadata?.compaction).length,
    traces: messages.flatMap((m) => m.parts).filter((p) => p.type === "tool-compact_context")
      .length,
  };
}

test("a long chat compacts itself, shows the trace, and compacts again from the ring", async ({
  page,
}) => {
  test.setTimeout(180_000);
  await openNewChat(page, `e2e-compaction-${Date.now()}@example.com`);

  const picker = page.getByLabel("Model");
  await expect(picker).toBeEnabled();
  await picker.selectOption(SMALL_MODEL);
  // The ring has the small model's usage (not the default model's) before the first turn.
  await expect(ring(page)).toHaveAttribute("aria-label", /of 4,096 tokens/);

  const running = page.locator("[data-testid=compaction-trace][data-state=running]");
  const done = page.locator("[data-testid=compaction-trace][data-state=done]");

  // Send long turns until one compacts before its reply.
  let fill = await ringFill(page);
  let compactedOn: number | undefined;
  let fillBeforeCompaction = 0;
  for (let turn = 0; turn < MAX_TURNS && compactedOn === undefined; turn++) {
    const { replies } = await stored(page);
    const before = fill;
    await send(page, longMessage(turn));
    // Whichever comes first: the running trace, or this turn's stored reply.
    await expect
      .poll(async () => (await running.isVisible()) || (await stored(page)).replies > replies, {
        timeout: 30_000,
        intervals: [50],
      })
      .toBe(true);

    if (await running.isVisible()) {
      compactedOn = turn;
      fillBeforeCompaction = before;
      await expect(running).toContainText("Compacting context…");
      await page.screenshot({ path: "test-results/compaction-running.png" });
    }
    await expect
      .poll(async () => (await stored(page)).replies, { timeout: 30_000 })
      .toBe(replies + 1);
    expect(
      (await stored(page)).traces,
      `turn ${turn + 1} compacted, but the trace was never seen running`,
    ).toBe(compactedOn === undefined ? 0 : 1);

    fill = await nextFill(page, before);
    if (compactedOn === undefined) {
      expect(fill, `turn ${turn + 1}: the ring should fill up`).toBeGreaterThan(before);
    }
  }
  expect(compactedOn, `no compaction within ${MAX_TURNS} turns`).toBeDefined();

  // The finished trace replaced the running one.
  await expect(running).toHaveCount(0);
  expect((await stored(page)).traces).toBe(1);
  const trace = done.last();
  await trace.scrollIntoViewIfNeeded();
  await expect(trace).toContainText("Summarized older messages");
  await expect(trace).not.toContainText("automatic digest");
  await expect(trace).toContainText("tokens");
  await trace.getByRole("button").click();
  const summary = trace.getByTestId("compaction-summary");
  await expect(summary).toBeVisible();
  // The summarizer by the name the model picker gives it, not its raw provider:model id.
  await expect(trace).toContainText("written by ");
  await expect(trace).not.toContainText(/written by [\w-]+:/);
  // Rendered as Markdown: a heading, not the raw "##".
  const heading = summary.getByRole("heading", { name: "Goal & open requests" });
  await expect(heading).toBeVisible();
  // Its headings are set like its text, not as page titles.
  expect(await heading.evaluate((h) => getComputedStyle(h).fontSize)).toBe(
    await summary
      .getByRole("listitem")
      .first()
      .evaluate((li) => getComputedStyle(li).fontSize),
  );
  await expect(summary).not.toContainText("##");
  // The fake summarizer lists the first line of each folded request: the first turn is one.
  await expect(summary).toContainText("Request 1: please keep track of item 1");
  await summary.scrollIntoViewIfNeeded();
  await page.screenshot({ path: "test-results/compaction-done.png" });
  // The trace from its heading (README's screenshot).
  await trace.evaluate((element) => element.scrollIntoView({ block: "start" }));
  await page.screenshot({ path: "test-results/compaction-trace.png" });

  // The ring, refreshed when the reply finished, is lower than before the compacting turn.
  expect(fill).toBeLessThan(fillBeforeCompaction);

  // Two more turns: the ring fills again, and nothing compacts (hysteresis).
  const turnAfter = (compactedOn ?? 0) + 1;
  for (const turn of [turnAfter, turnAfter + 1]) {
    const { replies } = await stored(page);
    const before = fill;
    await send(page, longMessage(turn));
    await expect
      .poll(async () => (await stored(page)).replies, { timeout: 30_000 })
      .toBe(replies + 1);
    fill = await nextFill(page, before);
    expect(fill, `turn ${turn + 1}: the ring should fill up`).toBeGreaterThan(before);
  }
  expect((await stored(page)).traces).toBe(1);

  // Compact now from the ring; a large drop asks first.
  const fillBeforeCompactNow = fill;
  await ring(page).click();
  const confirm = page.getByRole("alertdialog", { name: "Compact this chat now?" });
  await expect(confirm.or(ring(page).getByText("compacting…")).first()).toBeVisible();
  if (await confirm.isVisible()) {
    await confirm.getByRole("button", { name: "Compact", exact: true }).click();
    await expect(confirm).toBeHidden();
  }
  await expect.poll(async () => (await stored(page)).traces, { timeout: 30_000 }).toBe(2);
  const manual = done.last();
  await manual.scrollIntoViewIfNeeded();
  await expect(manual).toContainText("Summarized older messages");
  await expect(manual).toContainText("tokens");
  // The ring takes its numbers from the compact response at once.
  fill = await nextFillSoft(page, fillBeforeCompactNow, "the ring did not move after compact-now");
  expect.soft(fill, "the ring should drop after compact-now").toBeLessThan(fillBeforeCompactNow);
  // No compaction error banner (it carries a Dismiss button).
  await expect(page.getByRole("button", { name: "Dismiss" })).toHaveCount(0);

  await manual.scrollIntoViewIfNeeded();
  await page.mouse.move(0, 0);
  await ring(page).hover();
  const details = page.getByTestId("context-details");
  await expect(details).toBeVisible();
  await expect(details).toContainText("of 4,096 tokens");
  // The card names the click as the touch card's button does.
  await expect(details).toContainText("Click the ring to compact now");
  await page.screenshot({ path: "test-results/compaction-ring.png" });
  await page.mouse.move(0, 0);
  await expect(details).toBeHidden();

  // The traces are part of the stored timeline; the ring reads the same after a reload.
  await page.reload();
  await hydrated(page);
  expect((await stored(page)).traces).toBe(2);
  await expect(running).toHaveCount(0);
  await expect(done.last()).toContainText("Summarized older messages");
  await done.last().getByRole("button").click();
  await expect(
    done.last().getByTestId("compaction-summary").getByRole("heading", {
      name: "Goal & open requests",
    }),
  ).toBeVisible();
  await expect(page.getByLabel("Model")).toHaveValue(SMALL_MODEL);
  await expect.poll(() => ringFill(page), { intervals: [100] }).toBe(fill);
});
