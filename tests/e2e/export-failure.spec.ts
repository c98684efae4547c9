import { expect, test } from "@playwright/test";
import { openNewChat } from "./helpers";

/** An export that fails says why beside its button, without taking the chat's title away. */

test("on a phone, an export that fails says why under its button, keeps the chat's title in view, and can be dismissed", async ({
  page,
}) => {
  await openNewChat(page, `e2e-export-failure-${Date.now()}@example.com`);
  await page.setViewportSize({ width: 390, height: 844 });
  const title = page.getByRole("heading", { level: 1 });
  await expect(title).toHaveText("New chat");
  const titleWidth = (await title.boundingBox())?.width ?? 0;

  // Fold cannot be reached while the file is fetched.
  await page.route("**/api/chats/*/export**", (route) => route.abort());
  await page.getByRole("button", { name: "Export" }).click();
  await page.getByRole("menuitem", { name: "Markdown (.md)" }).click();
  const problem = page.getByRole("alert").filter({ hasText: "could not be reached" });
  await expect(problem).toBeVisible();

  // The title keeps its room in the header: the notice is drawn below it, within the screen.
  expect((await title.boundingBox())?.width ?? 0).toBeGreaterThanOrEqual(titleWidth - 1);
  const notice = await problem.boundingBox();
  const header = await page.locator("header").first().boundingBox();
  expect(notice && header && notice.y >= header.y + header.height - 1).toBe(true);
  expect(notice && notice.x >= 0 && notice.x + notice.width <= 390).toBe(true);

  await problem.getByRole("button", { name: "Dismiss" }).click();
  await expect(problem).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Export" })).toBeFocused();
});
