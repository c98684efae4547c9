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

/**
 * A fresh account (as registerUser) with a new chat open: New chat, then its page, hydrated.
 * The first chat a fresh server creates can take a few seconds on a busy machine.
 */
export async function openNewChat(page: Page, email: string): Promise<void> {
  await registerUser(page, email);
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveURL(/\/chat\/[0-9a-f-]{36}$/, { timeout: 20_000 });
  await hydrated(page);
}

/** Signs in through the real form as an existing account and waits for the chat home. */
export async function signIn(page: Page, email: string): Promise<void> {
  await page.goto("/login");
  await hydrated(page);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Welcome to Fold" })).toBeVisible();
}

/**
 * Types `text` into the composer once it takes input and no reply is being written (Enter
 * does not send while one streams, even after its first words show), and sends it.
 */
export async function send(page: Page, text: string): Promise<void> {
  const box = page.getByRole("textbox", { name: "Message" });
  await expect(box).toBeEnabled();
  await expect(page.getByRole("button", { name: "Stop" })).toHaveCount(0);
  await box.fill(text);
  await box.press("Enter");
}

const WORDS = [
  "budget",
  "harbour",
  "lantern",
  "meadow",
  "copper",
  "river",
  "signal",
  "orchard",
  "granite",
  "window",
  "summary",
  "velvet",
  "compass",
  "thunder",
  "pepper",
  "glacier",
  "archive",
  "ember",
  "canvas",
  "falcon",
  "quartz",
  "willow",
  "beacon",
  "saddle",
  "tundra",
  "marble",
  "cactus",
  "ribbon",
  "anchor",
  "nectar",
  "pigeon",
  "walnut",
];

/** `count` pseudo-random words after `label`, the same on every run. */
export function prose(label: string, seed: number, count: number): string {
  let state = seed * 7919 + 17;
  const words: string[] = [];
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    words.push(WORDS[(state >>> 16) % WORDS.length] ?? "word");
    if (i % 12 === 11) words.push(`note-${seed}-${i}.`);
  }
  return `${label} ${words.join(" ")}`;
}
