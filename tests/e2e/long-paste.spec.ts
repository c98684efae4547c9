import { expect, type Page, test } from "@playwright/test";
import { openNewChat } from "./helpers";

/** About 3,000 words in 30 paragraphs, as a pasted document would be. */
function pastedDocument(): string {
  const words = ["context", "window", "summary", "turn", "fold", "token", "reply", "budget"];
  return Array.from({ length: 30 }, (_, p) =>
    Array.from({ length: 100 }, (_, w) => words[(p * 7 + w * 3) % words.length]).join(" "),
  ).join("\n\n");
}

async function distanceFromBottom(page: Page): Promise<number> {
  return page
    .getByTestId("message-scroller")
    .evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);
}

test("after a 3,000-word paste the view stays at the bottom and later replies land on screen", async ({
  page,
}) => {
  await openNewChat(page, `e2e-paste-${Date.now()}@example.com`);
  await page.getByLabel("Model").selectOption("fake:fake-model");
  const box = page.getByRole("textbox", { name: "Message" });

  const pasted = pastedDocument();
  expect(pasted.split(/\s+/).length).toBe(3_000);
  await box.fill(pasted);
  await box.press("Enter");
  const reply = page.locator("[data-role=assistant]").last();
  // Generous: this machine's CPUs are shared, and the first reply also warms the server.
  await expect(reply).toContainText("Fake reply to: context", { timeout: 20_000 });
  // The reply has ended (its stats show) before the next message: Enter sends nothing while
  // a reply streams.
  const stats = page.getByRole("button", { name: "Message stats" });
  await expect(stats).toHaveCount(1, { timeout: 20_000 });
  await expect(reply).toBeInViewport();
  await expect.poll(() => distanceFromBottom(page)).toBeLessThan(4);

  for (const [i, question] of ["And the next one?", "One more, please."].entries()) {
    await box.fill(question);
    await box.press("Enter");
    const answer = page.locator("[data-role=assistant]").last();
    await expect(answer).toContainText(`Fake reply to: ${question}`, { timeout: 20_000 });
    await expect(stats).toHaveCount(i + 2, { timeout: 20_000 });
    await expect(answer).toBeInViewport();
    await expect.poll(() => distanceFromBottom(page)).toBeLessThan(4);
  }
});

test("a paste too long for the model's window is refused with the reason, stays in the box, and is not stored", async ({
  page,
}) => {
  await openNewChat(page, `e2e-too-long-${Date.now()}@example.com`);
  await page.getByLabel("Model").selectOption("fake:fake-model");
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("A short opener.");
  await box.press("Enter");
  const stats = page.getByRole("button", { name: "Message stats" });
  await expect(stats).toHaveCount(1, { timeout: 20_000 });

  // About 12,000 tokens: over the fake model's 8,192-token window on its own.
  const tooLong = "ledger entry ".repeat(6_000).trim();
  await box.fill(tooLong);
  await box.press("Enter");
  const alert = page.getByTestId("message-scroller").getByRole("alert");
  await expect(alert).toContainText("is too long on its own", { timeout: 20_000 });
  await expect(alert).toContainText("Shorten it");
  // Nothing to retry: the message was never stored, its text is back to shorten.
  await expect(alert.getByRole("button", { name: "Retry" })).toHaveCount(0);
  await expect(box).toHaveValue(tooLong);
  await expect(page.locator("[data-role=user]")).toHaveCount(1);
  await page.reload();
  await expect(page.locator("[data-role=user]")).toHaveCount(1);
  await expect(page.getByText("No reply.")).toHaveCount(0);
});
