import { expect, test } from "@playwright/test";
import { hydrated, PASSWORD, registerUser } from "./helpers";
import { ownServerPerFile } from "./own-server";
import { SIGN_IN_LOCKOUT_PORT } from "./servers";

/**
 * The wrong-password limit per account, in a real browser: strangers who know an address can
 * make sign-in to it wait, but not for the browser its owner signed in on before (the signed,
 * HttpOnly cookie lib/limits/sign-in-device.ts sets). A server of its own: the main e2e server
 * keeps the limit off.
 */

const FAILURES = 3;

const own = ownServerPerFile({
  port: SIGN_IN_LOCKOUT_PORT,
  provider: { models: [{ id: "fake-model", maxModelLen: 8192 }] },
  // Every request comes from 127.0.0.1 here: only the per-account limit is on.
  env: {
    RATE_LIMIT_SIGN_IN_FAILURES_PER_ACCOUNT: String(FAILURES),
    RATE_LIMIT_SIGN_IN_PER_MINUTE: "0",
  },
});

test("strangers' wrong passwords make sign-in to an account wait, but not in the browser its owner used", async ({
  page,
  browser,
  playwright,
}) => {
  const email = "lockout-owner@example.com";
  await registerUser(page, email, own.url);
  const device = (await page.context().cookies()).find((c) => c.name === "fold_sign_in_device");
  expect(device).toMatchObject({ httpOnly: true, path: "/api/auth", sameSite: "Lax" });
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login$/);

  // Someone else guesses, with a cookie jar of their own.
  const stranger = await playwright.request.newContext({
    baseURL: own.url,
    extraHTTPHeaders: { origin: own.url },
  });
  const statuses: number[] = [];
  for (let i = 0; i <= FAILURES; i++) {
    const guess = await stranger.post("/api/auth/sign-in/email", {
      data: { email, password: `not the password ${i}` },
    });
    statuses.push(guess.status());
  }
  await stranger.dispose();
  expect(statuses).toEqual([...Array(FAILURES).fill(401), 429]);

  // Another browser waits, even with the right password, and is told why.
  const elsewhere = await browser.newContext();
  const other = await elsewhere.newPage();
  await other.goto(`${own.url}/login`);
  await hydrated(other);
  await other.getByLabel("Email").fill(email);
  await other.getByLabel("Password").fill(PASSWORD);
  await other.getByRole("button", { name: "Sign in" }).click();
  await expect(other.getByText(/Too many wrong passwords for this account/)).toBeVisible();
  await expect(other).toHaveURL(/\/login$/);
  await elsewhere.close();

  // The owner's browser signs in as usual.
  await hydrated(page);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Welcome to Fold" })).toBeVisible();
});
