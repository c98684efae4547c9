import { expect, test } from "@playwright/test";
import { registerUser } from "./helpers";

const UNAVAILABLE = {
  status: 503,
  headers: { "retry-after": "1" },
  contentType: "application/json",
  body: JSON.stringify({
    error: { code: "unavailable:database", message: "Fold can't reach its database right now." },
  }),
};

test("while the API answers 503 the page says the database is unreachable, and clears itself after", async ({
  page,
}) => {
  await registerUser(page, `e2e-outage-${Date.now()}@example.com`);
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveURL(/\/chat\/[0-9a-f-]{36}$/);

  // The database goes away: what the page asks for next gets 503, and so does the health check.
  await page.route("**/api/models", (route) => route.fulfill(UNAVAILABLE));
  await page.route("**/api/health", (route) => route.fulfill(UNAVAILABLE));
  await page.reload();
  const banner = page.getByRole("alert").filter({ hasText: "can't reach its database" });
  await expect(banner).toBeVisible();
  await expect(banner).toContainText("Retrying");
  await expect(page.getByText("Could not load models (503)")).toBeVisible();

  // It comes back: the next retry finds it, the banner goes and what failed loads again.
  await page.unroute("**/api/health");
  await page.unroute("**/api/models");
  await expect(banner).toBeHidden({ timeout: 10_000 });
  await expect(page.getByText("Could not load models")).toBeHidden();
});
