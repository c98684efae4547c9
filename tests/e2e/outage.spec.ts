import { expect, test } from "@playwright/test";
import { hydrated, openNewChat, registerUser } from "./helpers";

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
  await openNewChat(page, `e2e-outage-${Date.now()}@example.com`);

  // The database goes away: what the page asks for next gets 503, and so does the health check.
  await page.route("**/api/models", (route) => route.fulfill(UNAVAILABLE));
  await page.route("**/api/health", (route) => route.fulfill(UNAVAILABLE));
  await page.reload();
  const banner = page.getByRole("alert").filter({ hasText: "can't reach its database" });
  await expect(banner).toBeVisible();
  await expect(banner).toContainText("Retrying");
  await expect(page.getByText("Could not load models (503)")).toBeVisible();
  // The banner moves the page down rather than lying over its header.
  const bannerBox = await banner.boundingBox();
  const exportBox = await page.getByRole("button", { name: "Export" }).boundingBox();
  expect(bannerBox && exportBox && bannerBox.y + bannerBox.height <= exportBox.y).toBe(true);

  // It comes back: the next retry finds it, the banner goes and what failed loads again.
  await page.unroute("**/api/health");
  await page.unroute("**/api/models");
  await expect(banner).toBeHidden({ timeout: 10_000 });
  await expect(page.getByText("Could not load models")).toBeHidden();
});

test("what failed in a database blip loads again by itself when the first check finds it back", async ({
  page,
}) => {
  await openNewChat(page, `e2e-blip-${Date.now()}@example.com`);
  // One reading of the chat's memory meets the database gone; the health check after it finds
  // the database back, so no banner ever shows.
  let failed = 0;
  await page.route(
    "**/api/chats/*/memory",
    (route) => {
      failed++;
      return route.fulfill(UNAVAILABLE);
    },
    { times: 1 },
  );
  await page.reload();
  await hydrated(page);
  await expect.poll(() => failed).toBe(1);

  await page.getByRole("button", { name: "Memory" }).click();
  const panel = page.getByRole("dialog", { name: "What the model remembers" });
  await expect(panel).toContainText("Nothing is summarized yet");
  await expect(panel.getByRole("alert")).toHaveCount(0);
});

test("at phone width the banner moves the chat-list button down with the page, and the list opens", async ({
  page,
}) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await registerUser(page, `e2e-outage-phone-${Date.now()}@example.com`);
  await page.route("**/api/health", (route) => route.fulfill(UNAVAILABLE));
  await page.route("**/api/models", (route) => route.fulfill(UNAVAILABLE));
  await page.reload();
  const banner = page.getByRole("alert").filter({ hasText: "can't reach its database" });
  await expect(banner).toBeVisible();
  const menu = page.getByRole("button", { name: "Open the chat list" });
  // The button is fixed to the top: it moves by the banner's height too, not under it.
  await expect(async () => {
    const [bannerBox, menuBox] = [await banner.boundingBox(), await menu.boundingBox()];
    expect(bannerBox && menuBox && bannerBox.y + bannerBox.height <= menuBox.y).toBe(true);
  }).toPass();
  await menu.click();
  await expect(page.getByRole("dialog")).toBeVisible();
  await page.keyboard.press("Escape");
  await page.unroute("**/api/health");
  await page.unroute("**/api/models");
  await expect(banner).toBeHidden({ timeout: 10_000 });
});

test("a proxy's error page in place of Fold's answer reads as Fold unreachable, puts the message back, and offers no Retry of an older one", async ({
  page,
}) => {
  await openNewChat(page, `e2e-proxy-${Date.now()}@example.com`);
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("Explain rivers in one line.");
  await box.press("Enter");
  await expect(page.locator("[data-role='assistant']").last()).toContainText(/\w{3,}/);
  await expect(page.getByRole("button", { name: "Stop" })).toHaveCount(0);

  // Fold restarts behind nginx: the next send gets nginx's HTML page, not Fold's answer.
  await page.route("**/api/chat", (route) =>
    route.fulfill({
      status: 502,
      contentType: "text/html",
      body: "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
    }),
  );
  await box.fill("What about lakes, specifically?");
  await box.press("Enter");
  const alert = page.getByRole("alert").filter({ hasText: "could not be reached" });
  await expect(alert).toContainText("Fold could not be reached (502)");
  await expect(page.getByText("<html>")).toHaveCount(0);
  // A Retry would answer the rivers question again: the message goes back to its box instead.
  await expect(alert.getByRole("button", { name: "Retry" })).toHaveCount(0);
  await expect(box).toHaveValue("What about lakes, specifically?");
});

test("a model list that fails to load (not an outage) is loaded again on its own", async ({
  page,
}) => {
  await registerUser(page, `e2e-models-retry-${Date.now()}@example.com`);
  // A blip: the list fails, once, with what a proxy answers while Fold restarts.
  let failures = 0;
  await page.route("**/api/models", (route) => {
    if (failures > 0) return route.continue();
    failures += 1;
    return route.fulfill({ status: 502, contentType: "text/html", body: "<html>502</html>" });
  });
  await page.reload();
  const box = page.getByRole("textbox", { name: "Message" });
  await expect(page.getByText("Could not load models (502)")).toBeVisible();
  await expect(box).toBeDisabled();
  // No reload needed: the next try finds it.
  await expect(box).toBeEnabled({ timeout: 10_000 });
  await expect(page.getByText("Could not load models")).toBeHidden();
});

test("a chat's context ring and Memory stay when the model list cannot load", async ({ page }) => {
  await openNewChat(page, `e2e-models-refused-${Date.now()}@example.com`);
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("Explain rivers in one line.");
  await box.press("Enter");
  await expect(page.locator("[data-role='assistant']").last()).toContainText(/\w{3,}/);

  // The list is refused (not a blip, so it is not tried again); the chat keeps its model.
  await page.route("**/api/models", (route) =>
    route.fulfill({
      status: 403,
      contentType: "application/json",
      body: JSON.stringify({ error: { code: "forbidden", message: "No models for you." } }),
    }),
  );
  await page.reload();
  await expect(page.getByText("Could not load models (403)")).toBeVisible();
  await expect(page.getByRole("button", { name: /context used/ })).toBeVisible();
  await page.getByRole("button", { name: "Memory" }).click();
  await expect(page.getByRole("dialog", { name: "What the model remembers" })).toBeVisible();
});

test("a message sent while the database is down is not left on screen: it is back in its box", async ({
  page,
}) => {
  await openNewChat(page, `e2e-outage-send-${Date.now()}@example.com`);
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("Explain rivers in one line.");
  await box.press("Enter");
  await expect(page.locator("[data-role='assistant']").last()).toContainText(/\w{3,}/);

  // The database goes away: the send is refused, and what is stored cannot be read either.
  await page.route("**/api/**", (route) => route.fulfill(UNAVAILABLE));
  await box.fill("What about lakes, specifically?");
  await box.press("Enter");
  await expect(box).toHaveValue("What about lakes, specifically?");
  // Shown once, in the box: not also as a message of the chat.
  await expect(page.locator("[data-role=user]")).toHaveCount(1);
  await expect(page.locator("[data-role=user]")).toHaveText(/Explain rivers/);
});

test("while Fold cannot be reached at all, a message sent stays on Fold's page and goes back into its box; once Fold is back it is answered", async ({
  page,
}) => {
  await openNewChat(page, `e2e-unreachable-${Date.now()}@example.com`);
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("Explain rivers in one line.");
  await box.press("Enter");
  await expect(page.locator("[data-role='assistant']").last()).toContainText(/\w{3,}/);
  await expect(page.getByRole("button", { name: "Stop" })).toHaveCount(0);
  const chatUrl = page.url();
  const alert = page.getByRole("alert").filter({ hasText: "could not be reached" });

  // Fold restarts behind a proxy that answers every request with its own error page.
  const asked: string[] = [];
  await page.route("**/*", (route) => {
    const request = route.request();
    asked.push(request.isNavigationRequest() ? "navigation" : new URL(request.url()).pathname);
    return route.fulfill({
      status: 502,
      contentType: "text/html",
      body: "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
    });
  });
  await box.fill("What about lakes?");
  await box.press("Enter");
  await expect(alert).toBeVisible();
  // The page asks whether Fold answers before it refreshes (or, refreshing blind, is replaced).
  await expect.poll(() => asked.some((a) => a === "/api/health" || a === "navigation")).toBe(true);
  expect(asked).not.toContain("navigation");
  await expect(box).toHaveValue("What about lakes?");
  await expect(page.getByText("nginx")).toHaveCount(0);
  await page.unroute("**/*");

  // No connection at all: the same, and not the browser's error page.
  await page.context().setOffline(true);
  await box.fill("And the sea?");
  await box.press("Enter");
  await expect(alert).toBeVisible();
  await expect(box).toHaveValue("And the sea?");
  await page.waitForTimeout(1_000);
  expect(page.url()).toBe(chatUrl);
  await expect(box).toHaveValue("And the sea?");

  await page.context().setOffline(false);
  await box.press("Enter");
  await expect(page.locator("[data-role='user']")).toHaveCount(2);
  await expect(page.locator("[data-role='user']").last()).toHaveText(/And the sea\?/);
  await expect(page.locator("[data-role='assistant']").last()).toContainText(/\w{3,}/);
  await expect(box).toHaveValue("");
});
