import { expect, type Page } from "@playwright/test";

export const PASSWORD = "correct horse battery";

export async function hydrated(page: Page): Promise<void> {
  await expect(page.locator("html[data-hydrated='true']")).toBeAttached();
}

/** Registers a fresh account through the real form and waits for the chat home. */
export async function registerUser(page: Page, email: string): Promise<void> {
  await page.goto("/register");
  await hydrated(page);
  await page.getByLabel("Name").fill(email.split("@")[0] ?? "user");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByRole("heading", { name: "Welcome to Fold" })).toBeVisible();
  await hydrated(page);
}
