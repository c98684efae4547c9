import { expect, type Page } from "@playwright/test";
import { PASSWORD } from "../helpers/account";

export { PASSWORD };

export async function hydrated(page: Page): Promise<void> {
  await expect(page.locator("html[data-hydrated='true']")).toBeAttached();
}

/**
 * Registers a fresh account through the real form and waits for the chat home: on the
 * server the spec runs against, or on the one at `base`.
 */
export async function registerUser(page: Page, email: string, base = ""): Promise<void> {
  await page.goto(`${base}/register`);
  await hydrated(page);
  await page.getByLabel("Name").fill(email.split("@")[0] ?? "user");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByRole("heading", { name: "Welcome to Fold" })).toBeVisible();
  await hydrated(page);
}
