import { expect, type Page, type Route, test } from "@playwright/test";
import { expectNoAxeViolations } from "./axe";
import { hydrated, registerUser, send, signIn } from "./helpers";

const FAKE_MODEL = "fake:fake-model";
/**
 * The server's first user, so its admin; the accessibility test signs in as it again. Fixed,
 * not time-stamped: Playwright loads this file again in a new worker after a failure, and each
 * e2e run starts on a fresh store.
 */
const ADMIN_EMAIL = "e2e-admin@example.com";
const OVERRIDE_TOKENS = 16_000;

async function sessionRole(page: Page): Promise<string | undefined> {
  const response = await page.request.get("/api/auth/get-session");
  const session = (await response.json()) as { user?: { role?: string } } | null;
  return session?.user?.role;
}

/** Opens the ring's hover card and returns it. */
async function ringDetails(page: Page) {
  await page.getByTestId("context-ring").hover();
  const details = page.getByTestId("context-details");
  await expect(details).toBeVisible();
  return details;
}

/** Sets the fake model's override as another admin would, from Fold's own origin (CSRF). */
async function putOverride(
  page: Page,
  override: { contextWindow: number | null; maxOutputTokens: number | null },
) {
  const response = await page.request.put("/api/admin/models", {
    headers: { origin: new URL(page.url()).origin },
    data: { provider: "fake", model: "fake-model", ...override },
  });
  expect(response.status()).toBe(200);
}

async function closeHoverCard(page: Page) {
  await page.mouse.move(0, 0);
  await expect(page.getByTestId("context-details")).toBeHidden();
}

test("an admin's window override reaches the chat's context ring on the next request", async ({
  page,
}) => {
  // This spec file sorts first, so its user is the e2e server's first: the admin.
  await registerUser(page, ADMIN_EMAIL);
  expect(
    await sessionRole(page),
    "the user registered here is not admin: another spec registered first on this e2e server " +
      "(the first user becomes admin). Run admin-models.spec.ts first or on a fresh server.",
  ).toBe("admin");

  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveURL(/\/chat\/[0-9a-f-]{36}$/);
  await hydrated(page);
  const chatUrl = page.url();

  const picker = page.getByLabel("Model");
  await expect(picker).toBeEnabled();
  await picker.selectOption(FAKE_MODEL);
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("How big is your context window?");
  await box.press("Enter");
  await expect(page.getByRole("button", { name: "Message stats" })).toBeVisible();

  // The fake provider's /v1/models says 8192.
  const before = await ringDetails(page);
  await expect(before).toContainText("of 8,192 tokens");
  await expect(before).toContainText("provider API");
  await page.screenshot({ path: "test-results/ring-hover.png" });
  await closeHoverCard(page);

  try {
    await page.getByRole("link", { name: "Admin · Models" }).click();
    await expect(page).toHaveURL(/\/admin\/models$/);
    await expect(page.getByRole("heading", { name: "Models", exact: true })).toBeVisible();
    await hydrated(page);

    const row = page.locator(`tr[data-model-id="${FAKE_MODEL}"]`);
    await expect(row.getByTestId("resolved-window")).toHaveText("8,192");
    await expect(row.getByTestId("window-source")).toHaveText("provider");
    await expect(page.locator('tr[data-model-id="demo:demo"]')).toContainText("Demo (offline)");

    // A validation message, and nothing saved.
    const windowInput = row.getByLabel(/^Context window override for/);
    await windowInput.fill("0");
    await row.getByRole("button", { name: "Save" }).click();
    await expect(row).toContainText("Window must be above zero.");
    await expect(row.getByTestId("window-source")).toHaveText("provider");
    // A window with no room for a conversation is refused, with the reason.
    await windowInput.fill("10");
    await row.getByRole("button", { name: "Save" }).click();
    await expect(row).toContainText("Window is too small");
    await expect(row).toContainText("8 are left for the conversation");
    await expect(row.getByTestId("window-source")).toHaveText("provider");
    // Calibration in words, not just "×1.15 / 0 samples".
    await expect(row.getByTestId("calibration")).toContainText(
      /The provider counts .* Fold estimates, learned from \d+ repl/,
    );

    // Written the way people write it: the comma neither clears the field nor the override.
    await windowInput.fill(OVERRIDE_TOKENS.toLocaleString("en-US"));
    // Saved by Enter in the field: the focus stays there while it saves and after.
    await windowInput.press("Enter");
    await expect(row).toContainText("Saved");
    await expect(windowInput).toBeFocused();
    await expect(row.getByTestId("resolved-window")).toHaveText("16,000");
    await expect(row.getByTestId("window-source")).toHaveText("override");
    await page.screenshot({ path: "test-results/admin-models.png", fullPage: true });

    // After a reload the table still shows it: it was written, not just drawn.
    await page.reload();
    await hydrated(page);
    await expect(row.getByTestId("resolved-window")).toHaveText("16,000");
    await expect(row.getByLabel(/^Context window override for/)).toHaveValue("16000");

    // On a phone the row stacks its cells: the override editor is on the screen, not past the
    // right edge of a table that scrolls sideways.
    const desktop = page.viewportSize();
    await page.setViewportSize({ width: 390, height: 844 });
    for (const control of [
      row.getByLabel(/^Context window override for/),
      row.getByLabel(/^Max output override for/),
      row.getByRole("button", { name: "Save" }),
      row.getByRole("button", { name: "Clear override" }),
    ]) {
      const box = await control.boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= 390, `${control} on a phone`).toBe(true);
    }
    await row.screenshot({ path: "test-results/admin-models-phone.png" });
    if (desktop) await page.setViewportSize(desktop);

    await page.goto(chatUrl);
    await hydrated(page);
    await expect(page.getByLabel("Model")).toHaveValue(FAKE_MODEL);
    const after = await ringDetails(page);
    await expect(after).toContainText("of 16,000 tokens");
    await expect(after).toContainText("admin override");
    await closeHoverCard(page);

    // Clearing the override returns the model to the provider's window.
    await page.getByRole("link", { name: "Admin · Models" }).click();
    await hydrated(page);
    await expect(row.getByTestId("window-source")).toHaveText("override");
    await row.getByRole("button", { name: "Clear override" }).click();
    await expect(row.getByTestId("window-source")).toHaveText("provider");
    await expect(row.getByTestId("resolved-window")).toHaveText("8,192");
  } finally {
    // Later specs share this server and expect the fake model's own window.
    await putOverride(page, { contextWindow: null, maxOutputTokens: null });
  }
});

test("notes a smaller window puts past what the model keeps word for word are flagged in the memory panel", async ({
  page,
}) => {
  await signIn(page, ADMIN_EMAIL);
  await hydrated(page);
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveURL(/\/chat\/[0-9a-f-]{36}$/);
  await hydrated(page);
  await page.getByLabel("Model").selectOption(FAKE_MODEL);
  await send(page, "Plan a conference day.");
  await expect(page.getByRole("button", { name: "Message stats" })).toBeVisible();

  const openNotes = async () => {
    await page.getByRole("button", { name: "Memory" }).click();
    return page
      .getByRole("dialog", { name: "What the model remembers" })
      .getByRole("region", { name: "Notes the model keeps" });
  };
  let notes = await openNotes();
  const box = notes.getByRole("textbox", { name: "New note" });
  for (const i of [1, 2]) {
    await box.fill(
      `Note ${i}: ${"the venue must have step-free access and a quiet room; ".repeat(8)}`,
    );
    await box.press("Enter");
    await expect(notes.getByTestId("memory-notes").getByRole("listitem")).toHaveCount(i);
  }
  await expect(notes.getByTestId("notes-room")).toContainText("used with this chat's model");
  await page.keyboard.press("Escape");

  try {
    // The admin halves the model's window: its summary, and the notes' room in it, shrink.
    await putOverride(page, { contextWindow: 4_096, maxOutputTokens: null });
    await page.reload();
    await hydrated(page);
    notes = await openNotes();
    await expect(notes.getByTestId("notes-room")).toContainText(
      "more than this chat's model keeps word for word",
    );
    await expect(notes.getByTestId("memory-notes").getByRole("listitem")).toHaveCount(2);
    await page.screenshot({ path: "test-results/memory-notes-past-room.png" });
  } finally {
    await putOverride(page, { contextWindow: null, maxOutputTokens: null });
  }
});

test("an admin page slow to open says so on its link", async ({ page }) => {
  await signIn(page, ADMIN_EMAIL);
  await hydrated(page);
  // The server is slow to render the users page: it is held until the test lets it go.
  const { promise: held, resolve: release } = Promise.withResolvers<void>();
  await page.route("**/admin/users**", async (route) => {
    await held;
    await route.continue();
  });
  // Asked for less motion: the spinner shows, still.
  await page.emulateMedia({ reducedMotion: "reduce" });
  const link = page.getByRole("link", { name: "Admin · Users" });
  // Its status region is there before the click, empty and taking no room: screen readers
  // announce what comes into a region they know, and may skip one that arrives filled.
  await expect(link.getByRole("status")).toHaveText("");
  expect(await link.getByRole("status").evaluate((s) => getComputedStyle(s).position)).toBe(
    "absolute",
  );
  await link.click();
  await expect(link.getByRole("status")).toHaveText("Opening…");
  const spinner = link.getByRole("status").locator("svg");
  await expect(spinner).toBeVisible();
  expect(await spinner.evaluate((svg) => getComputedStyle(svg).animationName)).toBe("none");
  release();
  await expect(page).toHaveURL(/\/admin\/users$/);
  await expect(page.getByRole("status").filter({ hasText: "Opening…" })).toHaveCount(0);
  await page.unrouteAll({ behavior: "ignoreErrors" });
});

test("a Refresh puts another admin's override in the editor, unless the admin is editing it", async ({
  page,
}) => {
  await signIn(page, ADMIN_EMAIL);
  await page.goto("/admin/models");
  await hydrated(page);
  const row = page.locator(`tr[data-model-id="${FAKE_MODEL}"]`);
  const windowInput = row.getByLabel(/^Context window override for/);
  const outputInput = row.getByLabel(/^Max output override for/);
  const refresh = () => page.getByRole("button", { name: "Refresh" }).click();
  try {
    await putOverride(page, { contextWindow: 16_000, maxOutputTokens: null });
    await refresh();
    await expect(windowInput).toHaveValue("16000");

    // Another admin changes it: the field follows, so Save cannot write 16,000 back.
    await putOverride(page, { contextWindow: 12_000, maxOutputTokens: null });
    await refresh();
    await expect(row.getByTestId("resolved-window")).toHaveText("12,000");
    await expect(windowInput).toHaveValue("12000");
    await expect(row.getByRole("button", { name: "Save" })).toBeDisabled();

    // A digit typed and deleted again is no edit: the next change still comes in.
    await windowInput.press("End");
    await windowInput.press("5");
    await expect(windowInput).toHaveValue("120005");
    await windowInput.press("Backspace");
    await putOverride(page, { contextWindow: 13_000, maxOutputTokens: null });
    await refresh();
    await expect(row.getByTestId("resolved-window")).toHaveText("13,000");
    await expect(windowInput).toHaveValue("13000");
    await expect(row.getByRole("button", { name: "Save" })).toBeDisabled();

    // What the admin is typing stays through a Refresh; the field they left takes the change.
    await outputInput.fill("2,000");
    await putOverride(page, { contextWindow: 14_000, maxOutputTokens: null });
    await refresh();
    await expect(row.getByTestId("resolved-window")).toHaveText("14,000");
    await expect(windowInput).toHaveValue("14000");
    await expect(outputInput).toHaveValue("2,000");

    // Another admin saves while this one types, with no Refresh between: Save is refused with
    // the reason, the row shows theirs, and what this admin typed is there to save again, over
    // the other admin's window rather than the one shown before it.
    await putOverride(page, { contextWindow: 15_000, maxOutputTokens: null });
    await row.getByRole("button", { name: "Save" }).click();
    await expect(row).toContainText("Another admin changed this model's override");
    await expect(row.getByTestId("resolved-window")).toHaveText("15,000");
    await expect(windowInput).toHaveValue("15000");
    await expect(outputInput).toHaveValue("2,000");
    await row.getByRole("button", { name: "Save" }).click();
    await expect(row).toContainText("Saved");
    await expect(row.getByTestId("resolved-window")).toHaveText("15,000");
    await expect(row.getByTestId("resolved-output")).toHaveText("2,000");
  } finally {
    await putOverride(page, { contextWindow: null, maxOutputTokens: null });
  }
});

/** Lifts or sets the fake provider's restriction as another admin would. */
async function putAccess(page: Page, restricted: boolean) {
  const response = await page.request.put("/api/admin/models/access", {
    headers: { origin: new URL(page.url()).origin },
    data: { provider: "fake", restricted },
  });
  expect(response.status()).toBe(200);
}

test("the allow-list's ticks stay as saved when a Refresh read before the save arrives after it", async ({
  page,
}) => {
  await signIn(page, ADMIN_EMAIL);
  await page.goto("/admin/models");
  await hydrated(page);
  const fake = page.locator('fieldset[data-provider="fake"]');
  const restrict = fake.getByRole("checkbox", { name: "Only allowed models" });
  await expect(restrict).not.toBeChecked();

  // The next allow-list read is held once the server has answered it.
  const { promise: serverAnswered, resolve: answered } = Promise.withResolvers<void>();
  const { promise: released, resolve: release } = Promise.withResolvers<void>();
  const { promise: deliveredOrDropped, resolve: delivered } = Promise.withResolvers<void>();
  await page.route("**/api/admin/models/access", async (route) => {
    if (route.request().method() !== "GET") return route.continue();
    const response = await route.fetch();
    answered();
    await released;
    await route.fulfill({ response }).catch(() => undefined);
    delivered();
  });
  try {
    await page.getByRole("button", { name: "Refresh" }).click();
    await serverAnswered;
    // The boxes show what the server saved, so they tick once it answers. Restricting starts
    // with every model the provider lists allowed: users lose none of them at once.
    await restrict.click();
    await expect(restrict).toBeChecked();
    const allow = fake.getByRole("checkbox", { name: `Allow ${FAKE_MODEL}` });
    await expect(allow).toBeChecked();
    await expect(fake).toContainText("3 of 3 models available to users");
    await allow.click();
    await expect(allow).not.toBeChecked();
    await expect(fake).toContainText("2 of 3");
    release();
    await deliveredOrDropped;
    // Time for the page to read an answer it was given: it must not tick back the old list.
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)));
    await expect(restrict).toBeChecked();
    await expect(allow).not.toBeChecked();
  } finally {
    await page.unroute("**/api/admin/models/access");
    // Later specs chat with the fake model as ordinary users.
    await putAccess(page, false);
  }
});

test("a signed-out visitor is sent to sign in and a non-admin gets a 403 page on /admin/models", async ({
  browser,
}) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto("/admin/models");
  // Sent to sign in, which names the page asked for (back there once signed in).
  await expect(page).toHaveURL(/\/login\?next=%2Fadmin%2Fmodels$/);

  await registerUser(page, `e2e-not-admin-${Date.now()}@example.com`);
  expect(
    await sessionRole(page),
    "this user should not be admin: the e2e server's first user is",
  ).toBe("user");
  await expect(page.getByRole("link", { name: "Admin · Models" })).toHaveCount(0);

  const response = await page.goto("/admin/models");
  expect(response?.status()).toBe(403);
  await expect(page.getByRole("heading", { name: "This page is for admins" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Models", exact: true })).toHaveCount(0);
  await expectNoAxeViolations(page, "the 403 page");
  // An in-app page, with the way back.
  await page
    .getByRole("navigation", { name: "Where to go" })
    .getByRole("link", { name: "Back to your chats" })
    .click();
  await expect(page.getByRole("heading", { name: "Welcome to Fold" })).toBeVisible();

  const api = await page.request.get("/api/admin/models");
  expect(api.status()).toBe(403);
  await context.close();
});

test("the admin pages have no axe-core violations, in light and dark", async ({ page }) => {
  // Four full axe-core runs over wide tables: more than the default minute on a busy machine.
  test.setTimeout(180_000);
  await signIn(page, ADMIN_EMAIL);

  for (const colorScheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme });
    await page.goto("/admin/models");
    await hydrated(page);
    await expect(page.locator(`tr[data-model-id="${FAKE_MODEL}"]`)).toBeVisible();
    await expectNoAxeViolations(page, `/admin/models (${colorScheme})`);

    await page.goto("/admin/users");
    await hydrated(page);
    await expect(page.getByRole("heading", { name: "Users" })).toBeVisible();
    await expect(page.locator(`tr[data-user-email="${ADMIN_EMAIL}"]`)).toBeVisible();
    await expectNoAxeViolations(page, `/admin/users (${colorScheme})`);
  }
});

test("an admin page that cannot load its table says so, and Try again loads it", async ({
  page,
}) => {
  await signIn(page, ADMIN_EMAIL);

  const pages = [
    {
      path: "/admin/models",
      api: "**/api/admin/models",
      what: "The models could not be loaded.",
      row: `tr[data-model-id="${FAKE_MODEL}"]`,
    },
    {
      path: "/admin/users",
      api: "**/api/admin/users",
      what: "The users could not be loaded.",
      row: `tr[data-user-email="${ADMIN_EMAIL}"]`,
    },
  ];
  // The list request fails, as when the server is restarting; other requests go through.
  const failListRequests = (route: Route) =>
    route.request().method() === "GET"
      ? route.fulfill({
          status: 503,
          contentType: "application/json",
          body: JSON.stringify({
            error: { code: "unavailable:database", message: "The database is unavailable." },
          }),
        })
      : route.continue();
  for (const { path, api, what, row } of pages) {
    await page.route(api, failListRequests);
    await page.goto(path);
    await hydrated(page);
    const alert = page.getByRole("alert").filter({ hasText: what });
    await expect(alert).toBeVisible();
    await page.unroute(api);
    await alert.getByRole("button", { name: "Try again" }).click();
    await expect(alert).toHaveCount(0);
    await expect(page.locator(row)).toBeVisible();

    // A Refresh that fails keeps the table and says so; the next one clears it.
    await page.route(api, failListRequests);
    await page.getByRole("button", { name: "Refresh" }).click();
    const stale = page.getByRole("alert").filter({ hasText: "Refresh failed" });
    await expect(stale).toContainText("The database is unavailable.");
    await expect(page.locator(row)).toBeVisible();
    await page.unroute(api);
    await page.getByRole("button", { name: "Refresh" }).click();
    await expect(stale).toHaveCount(0);
  }
});
