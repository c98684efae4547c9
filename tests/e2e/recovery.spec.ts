import { expect, test } from "@playwright/test";
import { hydrated, openNewChat, prose, send } from "./helpers";

// The e2e fake provider (scripts/e2e-server.mjs) serves `skewed` with a 4,096-token window
// and counts every prompt 2.5× o200k. Fold learns that ratio per model, but only after a
// turn on the model: the first turn on `skewed` is estimated with the cold-start ratio
// (1.15). The chat therefore starts on `fake-model` (8,192, counted 1×) and switches to
// `skewed` with a history of ≈ 1,850 tokens (o200k, system prompt and tools included):
//   Fold:     1,850 × 1.15 ≈ 2,130 — under Tier 1's trigger (0.8 × 2,868 = 2,294), no compaction;
//   provider: 1,850 × 2.5  ≈ 4,630 — over 4,096: 400 context_length_exceeded.
// Recovery trims the older turn in memory and retries once, under 4,096 tokens: the answer
// arrives, with a "trimmed" trace before it.
const ROOMY_MODEL = "fake:fake-model";
const SKEWED_MODEL = "fake:skewed";

/** ≈ 790 o200k tokens: sent on the roomy model, it fits anywhere. */
const BACKGROUND = prose("Background for the plan:", 1, 500);
/** ≈ 505 tokens: together with the background, too much for `skewed`'s real count. */
const QUESTION = prose("Now the question:", 2, 320);

test("a chat made to overflow shows the recovery trace and then the answer", async ({ page }) => {
  test.setTimeout(120_000);
  await openNewChat(page, `e2e-recovery-${Date.now()}@example.com`);

  const picker = page.getByLabel("Model");
  const ring = page.getByTestId("context-ring");
  const stats = page.getByRole("button", { name: "Message stats" });
  const traces = page.getByTestId("compaction-trace");
  const assistant = page.locator("[data-role=assistant]");

  // Turn 1 on the roomy model: a long background, answered normally.
  await expect(picker).toBeEnabled();
  await picker.selectOption(ROOMY_MODEL);
  await send(page, BACKGROUND);
  await expect(stats).toHaveCount(1, { timeout: 30_000 });
  await expect(assistant.last()).toContainText("Fake reply to: Background for the plan:");
  await expect(traces).toHaveCount(0);

  // Turn 2 on the skewed model, which Fold has never seen answer.
  await picker.selectOption(SKEWED_MODEL);
  await expect(ring).toHaveAttribute("aria-label", /of 4,096 tokens/);
  await send(page, QUESTION);
  await expect(stats).toHaveCount(2, { timeout: 30_000 });

  const reply = assistant.last();
  const expectRecovered = async () => {
    // One trace only: Tier 1 did not compact, recovery trimmed.
    await expect(traces).toHaveCount(1);
    const trace = reply.getByTestId("compaction-trace");
    await expect(trace).toHaveAttribute("data-state", "done");
    await expect(trace).toContainText("this request was shortened and sent again");
    await expect(trace).toContainText(/[\d,]+ → [\d,]+ tokens/);
    await expect(trace).toHaveAttribute("data-outcome", "trimmed");
    await expect(reply).toContainText("Fake reply to: Now the question:");
    await expect(reply.getByRole("button", { name: "Message stats" })).toBeVisible();
    // The trace comes before the answer in the reply.
    const traceBox = await trace.boundingBox();
    const answerBox = await reply.getByText("Fake reply to: Now the question:").boundingBox();
    expect(traceBox && answerBox && traceBox.y < answerBox.y).toBe(true);
    return trace;
  };

  const trace = await expectRecovered();
  // Recovery saved the turn: no error banner, no "Compact now".
  await expect(page.getByText("no longer fits")).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Compact now" })).toHaveCount(0);

  await trace.getByRole("button").click();
  await expect(trace).toContainText("Why: the model said the chat was too long.");
  // The cause in numbers waits behind "Details".
  await trace.getByText("Details").click();
  await expect(trace).toContainText(/The provider counted [\d,]+ tokens; the request was trimmed/);
  const counted = Number(
    /The provider counted ([\d,]+) tokens/
      .exec((await trace.textContent()) ?? "")?.[1]
      ?.replace(/,/g, ""),
  );
  expect(counted, "the provider's count of the rejected prompt").toBeGreaterThan(4096);

  await reply.getByRole("button", { name: "Message stats" }).click();
  const dialog = page.getByRole("dialog", { name: "Stats" });
  await expect(dialog).toContainText("skewed (fake)");
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();

  await trace.scrollIntoViewIfNeeded();
  // Away from the stats button (closing the dialog focused it), so its tooltip does not
  // cover the answer.
  await page.mouse.move(0, 0);
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await expect(page.getByText(/ms to first token/)).toBeHidden();
  await page.screenshot({ path: "test-results/recovery-trace.png" });

  // The trace is part of the stored reply: both survive a reload.
  await page.reload();
  await hydrated(page);
  await expect(stats).toHaveCount(2);
  await expectRecovered();
  await expect(page.getByLabel("Model")).toHaveValue(SKEWED_MODEL);
});
