import { expect, test } from "@playwright/test";
import { hydrated, openNewChat } from "./helpers";

/**
 * A page left open while its session ends elsewhere (signed out in another tab, the session
 * expired, the account deleted): its next action sends it to sign in and back, as a page load
 * does, rather than saying "You need to sign in first." beside chats it can no longer open.
 */

test("signed out in another tab, New chat in this one goes to sign in, and back to this chat after", async ({
  page,
}) => {
  await openNewChat(page, `e2e-signed-out-elsewhere-${Date.now()}@example.com`);
  const chatPath = new URL(page.url()).pathname;

  const other = await page.context().newPage();
  await other.goto("/");
  await hydrated(other);
  await other.getByRole("button", { name: "Sign out" }).click();
  await expect(other).toHaveURL(/\/login$/);
  await other.close();

  await page.getByRole("button", { name: "New chat", exact: true }).click();
  await expect(page).toHaveURL(`/login?next=${encodeURIComponent(chatPath)}`);
  await expect(page.getByRole("heading", { name: "Sign in to Fold" })).toBeVisible();
  await expect(page.getByText("You need to sign in first.")).toHaveCount(0);
});
