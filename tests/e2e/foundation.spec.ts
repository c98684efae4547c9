import { expect, test } from "@playwright/test";
import { hydrated, PASSWORD, registerUser } from "./helpers";

test("register, create a chat, see it in the sidebar, and find it again after a reload", async ({
  page,
}) => {
  await page.goto("/");
  await expect(page).toHaveURL(/\/login$/);

  await registerUser(page, `e2e-${Date.now()}@example.com`);
  const sidebar = page.getByRole("navigation", { name: "Chats" });
  await expect(sidebar.getByText("No chats yet")).toBeVisible();

  await page.getByRole("button", { name: "New chat" }).click();
  // 2–4 s on a loaded 2-core machine: more than the default 5 s now and then.
  await expect(page).toHaveURL(/\/chat\/[0-9a-f-]{36}$/, { timeout: 20_000 });
  await expect(sidebar.getByRole("link", { name: "New chat" })).toBeVisible();

  await page.reload();
  await hydrated(page);
  await expect(sidebar.getByRole("link", { name: "New chat" })).toHaveAttribute(
    "aria-current",
    "page",
  );
  await page.screenshot({ path: "test-results/foundation-chat.png", fullPage: true });

  // Rename it, then delete it, through the sidebar.
  await sidebar.getByRole("link", { name: "New chat" }).hover();
  await page.getByRole("button", { name: "Rename New chat" }).click();
  await page.getByLabel("Chat title").fill("Holiday plans");
  await page.getByLabel("Chat title").press("Enter");
  await expect(sidebar.getByRole("link", { name: "Holiday plans" })).toBeVisible();
  await page.reload();
  await hydrated(page);
  await expect(sidebar.getByRole("link", { name: "Holiday plans" })).toBeVisible();

  await sidebar.getByRole("link", { name: "Holiday plans" }).hover();
  await page.getByRole("button", { name: "Delete Holiday plans" }).click();
  await page.getByRole("button", { name: "Delete", exact: true }).click();
  await expect(page).toHaveURL(/\/$/);
  await expect(sidebar.getByText("No chats yet")).toBeVisible();
});

test("a signed-out visitor is sent to sign in, and signing in works", async ({ page }) => {
  const email = `e2e-login-${Date.now()}@example.com`;
  await registerUser(page, email);
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login$/);
  await hydrated(page);
  await page.getByLabel("Email").fill(email);
  // A wrong password is said, and focus stays on the button that was pressed (it fell to the
  // page while the button was disabled for the request).
  await page.getByLabel("Password").fill("not the password");
  const signIn = page.getByRole("button", { name: "Sign in" });
  await signIn.click();
  await expect(page.getByRole("alert").filter({ hasText: /password/i })).toBeVisible();
  await expect(signIn).toBeFocused();
  await page.getByLabel("Password").fill(PASSWORD);
  await signIn.click();
  await expect(page.getByRole("heading", { name: "Welcome to Fold" })).toBeVisible();
});
