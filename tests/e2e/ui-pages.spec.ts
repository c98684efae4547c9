import { readFile } from "node:fs/promises";
import { expect, type Page, test } from "@playwright/test";
import { chatExportSchema } from "@/lib/chat/export";
import { hydrated, registerUser } from "./helpers";

const FAKE_MODEL = "fake:fake-model";
/** How long the test holds the first message back, so "Thinking…" has seconds to count. */
const HOLD_MS = 4_000;

async function newChat(page: Page): Promise<void> {
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveURL(/\/chat\//, { timeout: 20_000 });
  await hydrated(page);
  await page.getByLabel("Model").selectOption(FAKE_MODEL);
}

async function send(page: Page, text: string): Promise<void> {
  const replies = await page.getByRole("button", { name: "Message stats" }).count();
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill(text);
  await box.press("Enter");
  await expect(page.getByRole("button", { name: "Message stats" })).toHaveCount(replies + 1);
}

/** A model the picker offers besides `current`. */
async function otherModelThan(page: Page, current: string): Promise<string> {
  const other = await page
    .getByLabel("Model")
    .locator("option")
    .evaluateAll(
      (options, current) =>
        options.map((o) => (o as HTMLOptionElement).value).find((v) => v && v !== current),
      current,
    );
  if (!other) throw new Error("only one model to pick");
  return other;
}

test("typing on the home page starts a chat and sends the message there, once", async ({
  page,
}) => {
  await registerUser(page, `e2e-home-${Date.now()}@example.com`);
  await page.getByLabel("Model").selectOption(FAKE_MODEL);
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("Hello from the home page");
  await box.press("Enter");

  await expect(page).toHaveURL(/\/chat\/[0-9a-f-]{36}$/);
  await expect(page.locator("[data-role=user]")).toHaveText("Hello from the home page");
  await expect(page.locator("[data-role=assistant]").last()).toContainText(
    "Fake reply to: Hello from the home page",
  );
  await expect(page.getByLabel("Model")).toHaveValue(FAKE_MODEL);

  // A reload neither loses it nor sends it again.
  await page.reload();
  await hydrated(page);
  await expect(page.locator("[data-role=user]")).toHaveCount(1);
  await expect(page.locator("[data-role=assistant]")).toHaveCount(1);
});

test("'Thinking…' counts the seconds until the reply starts", async ({ page }) => {
  await registerUser(page, `e2e-timer-${Date.now()}@example.com`);
  await newChat(page);
  // Hold the request back in the browser: the reply cannot start before HOLD_MS.
  await page.route("**/api/chat", async (route) => {
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    await route.continue();
  });
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("Take your time.");
  await box.press("Enter");

  const thinking = page.getByTestId("thinking");
  await expect(thinking).toContainText("Thinking…");
  await expect(page.getByTestId("thinking-seconds")).toHaveText("0 s");
  await expect(page.getByTestId("thinking-seconds")).toHaveText("1 s");
  await expect(page.getByTestId("thinking-seconds")).toHaveText("2 s");
  await expect(page.getByRole("button", { name: "Message stats" })).toHaveCount(1);
  await expect(thinking).toHaveCount(0);
});

test("unknown pages and other users' chats get an in-app 404; admin pages a 403 for users", async ({
  browser,
}) => {
  const stamp = Date.now();
  // Two accounts: the second is never the server's first, so never its admin.
  const ownerPage = await (await browser.newContext()).newPage();
  await registerUser(ownerPage, `e2e-owner-${stamp}@example.com`);
  await newChat(ownerPage);
  await send(ownerPage, "Mine alone.");
  const ownersChat = ownerPage.url();

  const page = await (await browser.newContext()).newPage();
  await registerUser(page, `e2e-visitor-${stamp}@example.com`);

  for (const url of ["/no-such-page", new URL(ownersChat).pathname]) {
    const response = await page.goto(url);
    expect(response?.status(), url).toBe(404);
    await expect(page.getByRole("heading", { name: "This page does not exist" })).toBeVisible();
    await expect(page.getByText("Mine alone.")).toHaveCount(0);
  }
  const nav = page.getByRole("navigation", { name: "Where to go" });
  await nav.getByRole("link", { name: "Back to your chats" }).click();
  await expect(page.getByRole("heading", { name: "Welcome to Fold" })).toBeVisible();

  const forbidden = await page.goto("/admin/users");
  expect(forbidden?.status()).toBe(403);
  await expect(page.getByRole("heading", { name: "This page is for admins" })).toBeVisible();
  await expect(nav.getByRole("link", { name: "Back to your chats" })).toBeVisible();
});

test("the tab keeps a title on every page and while moving between chats", async ({ page }) => {
  await page.goto("/login");
  await expect(page).toHaveTitle("Sign in · Fold");
  await page.goto("/register");
  await expect(page).toHaveTitle("Create account · Fold");
  await registerUser(page, `e2e-title-${Date.now()}@example.com`);
  await expect(page).toHaveTitle("Fold");
  // Every change to the document's title while the user opens new chats, as it happens: Next
  // drops a page's metadata title for a moment on a client-side move.
  await page.evaluate(() => {
    const seen: string[] = [];
    Object.assign(window, { titlesSeen: seen });
    new MutationObserver(() => seen.push(document.title)).observe(document.documentElement, {
      subtree: true,
      childList: true,
      characterData: true,
    });
  });
  for (let i = 0; i < 3; i++) {
    const before = page.url();
    await page.getByRole("button", { name: "New chat" }).click();
    await expect(page).not.toHaveURL(before, { timeout: 20_000 });
    await hydrated(page);
    await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();
    // New chat again on a chat nobody has used: no second empty chat, the box is ready.
    const fresh = page.url();
    await page.locator("body").click({ position: { x: 1, y: 1 } });
    await page.getByRole("button", { name: "New chat" }).click();
    await expect(page.getByRole("textbox", { name: "Message" })).toBeFocused();
    expect(page.url()).toBe(fresh);
    // Used (renamed here, as a message or a model picked would), the chat is no longer new:
    // the next click makes one.
    const renamed = await page.evaluate(async (url) => {
      const id = new URL(url).pathname.split("/").at(-1);
      const response = await fetch(`/api/chats/${id}`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title: "Used" }),
      });
      return response.status;
    }, fresh);
    expect(renamed).toBe(200);
  }
  const seen = await page.evaluate(
    () => (window as unknown as { titlesSeen: string[] }).titlesSeen,
  );
  expect(new Set(seen)).toEqual(new Set(["Fold"]));
});

test("on a phone, New chat in the drawer on a chat nobody has used closes the drawer onto its message box", async ({
  page,
}) => {
  await page.setViewportSize({ width: 390, height: 800 });
  await registerUser(page, `e2e-phone-new-${Date.now()}@example.com`);
  const drawer = page.getByRole("dialog", { name: "Chats" });
  await page.getByRole("button", { name: "Open the chat list" }).click();
  await drawer.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveURL(/\/chat\//, { timeout: 20_000 });
  await hydrated(page);
  await expect(drawer).toBeHidden();
  const fresh = page.url();
  // Again, on the chat just made: the page stays, so the drawer must close by itself.
  await page.getByRole("button", { name: "Open the chat list" }).click();
  await drawer.getByRole("button", { name: "New chat" }).click();
  await expect(drawer).toBeHidden();
  await expect(page.getByRole("textbox", { name: "Message" })).toBeFocused();
  expect(page.url()).toBe(fresh);
});

test("the first Tab reaches a skip link that jumps to the message box", async ({ page }) => {
  await registerUser(page, `e2e-skip-${Date.now()}@example.com`);
  await newChat(page);
  // A fresh load: the keyboard starts from the top of the page. The box takes the focus once
  // the page knows the chat's model (the model change just sent may land after the reload).
  await page.reload();
  await hydrated(page);
  await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();
  await page.keyboard.press("Tab");
  const skip = page.getByRole("link", { name: "Skip to the message box" });
  await expect(skip).toBeFocused();
  await expect(skip).toBeVisible();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("textbox", { name: "Message" })).toBeFocused();
});

test("compact-now with nothing to fold answers with a toast and keeps Regenerate", async ({
  page,
}) => {
  await registerUser(page, `e2e-nothing-${Date.now()}@example.com`);
  await newChat(page);
  await send(page, "A short question.");

  // The hover card speaks plainly.
  const ring = page.getByTestId("context-ring");
  await ring.hover();
  const details = page.getByTestId("context-details");
  await expect(details).toContainText("Older messages get summarized when this chat reaches");
  await expect(details).not.toContainText("Compacts at");
  await expect(details).not.toContainText("sent as is");
  await page.mouse.move(0, 0);
  await expect(details).toBeHidden();
  await expect(ring).toHaveAttribute("data-tone", "neutral");

  // The toast answers the click and the card stays shut under it, whether the pointer came onto
  // the ring just to click or rested there with the card open. The card opens 150 ms after the
  // pointer or the focus reaches the ring: past that it must still be shut.
  const toast = page.locator("[data-sonner-toast]").filter({ hasText: "Nothing to summarize yet" });
  for (const rested of [false, true]) {
    await page.mouse.move(0, 0);
    await expect(toast).toHaveCount(0, { timeout: 10_000 });
    if (rested) {
      await ring.hover();
      await expect(details).toBeVisible();
    }
    await ring.click();
    await expect(toast).toBeVisible();
    await page.waitForTimeout(400);
    await expect(details, rested ? "after a rest on the ring" : "after a click").toBeHidden();
  }
  // Once the pointer leaves and comes back, the card opens again.
  await page.mouse.move(0, 0);
  await ring.hover();
  await expect(details).toBeVisible();
  // By keyboard: the card opens on focus, and closes once Enter compacts, so it covers nothing.
  await page.mouse.move(0, 0);
  // (The clicks left it focused: a fresh focus, as a Tab would bring.)
  await ring.blur();
  await ring.focus();
  await expect(details).toBeVisible();
  await page.keyboard.press("Enter");
  await expect(details).toBeHidden();
  await expect(ring).toBeFocused();
  await expect(page.getByTestId("compaction-trace")).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Regenerate response" })).toBeVisible();
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId("compaction-trace")).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Regenerate response" })).toBeVisible();
});

test("a chat exports as Markdown and as JSON that holds every message in order", async ({
  page,
}) => {
  await registerUser(page, `e2e-export-${Date.now()}@example.com`);
  await newChat(page);
  const questions = ["First question about tides.", "Second question about moons."];
  for (const question of questions) await send(page, question);
  const chatId = page.url().split("/").at(-1) ?? "";

  async function download(item: string) {
    await page.getByRole("button", { name: "Export" }).click();
    const [file] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("menuitem", { name: item }).click(),
    ]);
    const path = await file.path();
    return { name: file.suggestedFilename(), text: await readFile(path, "utf8") };
  }

  const json = await download("JSON (.json)");
  expect(json.name).toMatch(/\.json$/);
  const exported = chatExportSchema.parse(JSON.parse(json.text));
  // The same messages the chat's API serves, in the same order, with roles and text.
  const stored = (await (await page.request.get(`/api/chats/${chatId}`)).json()) as {
    messages: Array<{ id: string; role: string; parts: Array<{ type: string; text?: string }> }>;
  };
  expect(stored.messages).toHaveLength(4);
  expect(exported.messages.map((m) => [m.id, m.role])).toEqual(
    stored.messages.map((m) => [m.id, m.role]),
  );
  expect(exported.messages.map((m) => m.parts)).toEqual(stored.messages.map((m) => m.parts));
  expect(exported.messages.filter((m) => m.role === "user").map((m) => m.text)).toEqual(questions);
  for (const [index, question] of questions.entries()) {
    expect(exported.messages[index * 2 + 1]?.text).toContain(`Fake reply to: ${question}`);
  }

  const markdown = await download("Markdown (.md)");
  expect(markdown.name).toMatch(/\.md$/);
  expect(markdown.text.match(/^### You · /gm)).toHaveLength(2);
  expect(markdown.text.match(/^### Assistant · /gm)).toHaveLength(2);
  const first = markdown.text.indexOf(questions[0] ?? "");
  const second = markdown.text.indexOf(questions[1] ?? "");
  expect(first).toBeGreaterThan(0);
  expect(second).toBeGreaterThan(first);

  // An export the server refuses is said beside the button, not saved as the file.
  await page.route("**/api/chats/*/export*", (route) =>
    route.fulfill({
      status: 503,
      contentType: "application/json",
      body: JSON.stringify({
        error: { code: "unavailable:database", message: "The database is unavailable." },
      }),
    }),
  );
  const downloads: string[] = [];
  page.on("download", (file) => downloads.push(file.suggestedFilename()));
  await page.getByRole("button", { name: "Export" }).click();
  await page.getByRole("menuitem", { name: "JSON (.json)" }).click();
  await expect(
    page.getByRole("alert").filter({ hasText: "The database is unavailable." }),
  ).toBeVisible();
  expect(downloads).toEqual([]);
  await page.unroute("**/api/chats/*/export*");
});

test("renaming a chat starts from its title as it is now, not as it was when listed", async ({
  page,
}) => {
  await registerUser(page, `e2e-rename-${Date.now()}@example.com`);
  await newChat(page);
  const list = page.getByRole("navigation", { name: "Chats" });
  await expect(list.getByRole("link", { name: "New chat" })).toBeVisible();
  // The first turn names the chat after its message.
  await send(page, "Plan the harbour trip");
  const entry = list.getByRole("listitem").filter({ hasText: "Plan the harbour trip" });
  await expect(entry).toBeVisible();

  await entry.hover();
  await entry.getByRole("button", { name: /^Rename/ }).click();
  const title = page.getByRole("textbox", { name: "Chat title" });
  await expect(title).toHaveValue("Plan the harbour trip");
  // Saved unchanged, it stays as it is.
  await title.press("Enter");
  await expect(list.getByRole("link", { name: "Plan the harbour trip" })).toBeVisible();
  await page.reload();
  await hydrated(page);
  await expect(list.getByRole("link", { name: "Plan the harbour trip" })).toBeVisible();
});

test.describe("on a touch screen", () => {
  test.use({ hasTouch: true, isMobile: true, viewport: { width: 390, height: 844 } });

  test("a message's and a chat's actions show without a hover; a tap on the ring shows its details", async ({
    page,
  }) => {
    await registerUser(page, `e2e-touch-${Date.now()}@example.com`);
    // A phone starts a chat from the home page's message box.
    await page.getByLabel("Model").selectOption(FAKE_MODEL);
    const box = page.getByRole("textbox", { name: "Message" });
    // Return on a touch keyboard starts a new line; the button sends.
    await box.fill("Touch me");
    await box.press("Enter");
    await expect(box).toHaveValue("Touch me\n");
    await page.getByRole("button", { name: "Send message" }).tap();
    await expect(page.getByRole("button", { name: "Message stats" })).toHaveCount(1);
    const user = page.locator("[data-role=user]").first();
    await expect(user.getByRole("button", { name: "Edit message" })).toHaveCSS("opacity", "1");
    const pin = page.getByRole("button", { name: "Pin message" }).first();
    await expect(pin).toHaveCSS("opacity", "1");

    // A tap on the ring shows how full the chat is; compacting is a button in there.
    await page.getByTestId("context-ring").tap();
    const details = page.getByTestId("context-details");
    await expect(details).toContainText("How much the model can see");
    // Kept clear of the screen's edges, its border whole.
    const card = await page.getByRole("dialog").filter({ has: details }).boundingBox();
    const width = page.viewportSize()?.width ?? 0;
    expect(card && card.x >= 8 && card.x + card.width <= width - 8).toBe(true);
    await page.getByRole("button", { name: "Compact now" }).tap();
    await expect(page.getByText("Nothing to summarize yet").first()).toBeVisible();
    await expect(details).toBeHidden();
    // The toast comes to rest below the chat's header: its menu, title and Export stay in reach.
    const header = await page.locator("header").first().boundingBox();
    const toastTop = async () =>
      (await page.locator("[data-sonner-toast]").first().boundingBox())?.y ?? -1;
    await expect.poll(toastTop).toBeGreaterThanOrEqual((header?.y ?? 0) + (header?.height ?? 0));

    await page.getByRole("button", { name: "Open the chat list" }).click();
    const drawer = page.getByRole("dialog", { name: "Chats" });
    await expect(drawer.getByRole("button", { name: "Rename Touch me" })).toBeVisible();
    await expect(drawer.getByRole("button", { name: "Delete Touch me" })).toBeVisible();
    // The confirmation opens above the drawer, and its buttons take taps.
    await drawer.getByRole("button", { name: "Delete Touch me" }).tap();
    const confirm = page.getByRole("alertdialog", { name: "Delete this chat?" });
    await confirm.getByRole("button", { name: "Cancel" }).tap();
    await expect(confirm).toBeHidden();
    await drawer.getByRole("button", { name: "Delete Touch me" }).tap();
    await confirm.getByRole("button", { name: "Delete", exact: true }).tap();
    await expect(drawer.getByRole("button", { name: "Delete Touch me" })).toHaveCount(0);
  });
});

test("older chats loaded in the sidebar stay listed after a reply refreshes the first page", async ({
  page,
}) => {
  test.setTimeout(90_000);
  await registerUser(page, `e2e-older-${Date.now()}@example.com`);
  // One chat more than the first page holds (50): the oldest is only reached by asking.
  const created = await page.evaluate(async () => {
    const ids: string[] = [];
    for (let i = 0; i < 51; i++) {
      const response = await fetch("/api/chats", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({}),
      });
      ids.push(((await response.json()) as { chat: { id: string } }).chat.id);
    }
    return ids;
  });
  const oldest = created[0];
  await page.goto(`/chat/${created.at(-1)}`);
  await hydrated(page);
  const list = page.getByRole("navigation", { name: "Chats" });
  const oldestLink = list.locator(`a[href="/chat/${oldest}"]`);
  await expect(oldestLink).toHaveCount(0);
  await page.getByRole("button", { name: "Show older chats" }).click();
  await expect(oldestLink).toHaveCount(1);

  await page.getByLabel("Model").selectOption(FAKE_MODEL);
  await send(page, "A reply refreshes the first page");
  await expect(list.getByRole("link", { name: "A reply refreshes the first page" })).toBeVisible();
  await expect(oldestLink).toHaveCount(1);
});

test("a model change the server does not save puts the picker back and says so; so does a pin sent while offline", async ({
  page,
}) => {
  await registerUser(page, `e2e-unsaved-${Date.now()}@example.com`);
  await newChat(page);
  await send(page, "Who answers this?");
  const picker = page.getByLabel("Model");
  const other = await otherModelThan(page, FAKE_MODEL);

  await page.route("**/api/chats/*", (route) =>
    route.request().method() === "PATCH"
      ? route.fulfill({
          status: 500,
          json: { error: { code: "internal", message: "Something went wrong on Fold's side." } },
        })
      : route.continue(),
  );
  await picker.selectOption(other);
  await expect(page.getByRole("alert").filter({ hasText: "Something went wrong" })).toBeVisible();
  await expect(picker).toHaveValue(FAKE_MODEL);
  await page.unroute("**/api/chats/*");
  // Tried again and saved: the message goes.
  await picker.selectOption(other);
  await expect(page.getByRole("alert").filter({ hasText: "Something went wrong" })).toHaveCount(0);
  await expect(picker).toHaveValue(other);
  await picker.selectOption(FAKE_MODEL);
  await expect(picker).toHaveValue(FAKE_MODEL);

  await page.route("**/api/chats/*/pins", (route) => route.abort("internetdisconnected"));
  await page.getByRole("button", { name: "Pin message" }).first().click();
  await expect(page.getByRole("alert").filter({ hasText: "could not be reached" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Pin message" }).first()).toBeVisible();
});

test("model picks made quickly are saved in the order they were made", async ({ page }) => {
  await registerUser(page, `e2e-picks-${Date.now()}@example.com`);
  await newChat(page);
  const picker = page.getByLabel("Model");
  await expect(picker).toHaveValue(FAKE_MODEL);
  await page.waitForLoadState("networkidle");
  const other = await otherModelThan(page, FAKE_MODEL);

  // The first pick's save is slow; the second pick, back to where the chat was, is made
  // while it is on its way. The chat must end on the second pick, not on whichever save
  // reached the server last.
  const { promise: firstHeld, resolve: releaseFirst } = Promise.withResolvers<void>();
  let patches = 0;
  await page.route("**/api/chats/*", async (route) => {
    if (route.request().method() !== "PATCH") return route.continue();
    patches += 1;
    if (patches === 1) await firstHeld;
    return route.continue();
  });
  await picker.selectOption(other);
  await expect.poll(() => patches).toBe(1);
  await picker.selectOption(FAKE_MODEL);
  releaseFirst();
  await expect.poll(() => patches).toBe(2);
  await page.waitForLoadState("networkidle");
  await page.unroute("**/api/chats/*");

  await page.reload();
  await hydrated(page);
  await expect(page.getByLabel("Model")).toHaveValue(FAKE_MODEL);
});

test("a pick the chat was answered with stays picked when its own save fails late", async ({
  page,
}) => {
  await registerUser(page, `e2e-answered-pick-${Date.now()}@example.com`);
  await newChat(page);
  await send(page, "Who answers this?");
  const picker = page.getByLabel("Model");
  const other = await otherModelThan(page, FAKE_MODEL);

  // The pick's save is slow and then fails; a message sent meanwhile goes with the pick, and
  // the turn that answers it keeps that model on the chat.
  const { promise: saveHeld, resolve: failSave } = Promise.withResolvers<void>();
  await page.route("**/api/chats/*", async (route) => {
    if (route.request().method() !== "PATCH") return route.continue();
    await saveHeld;
    return route.fulfill({
      status: 500,
      json: { error: { code: "internal", message: "Something went wrong on Fold's side." } },
    });
  });
  let reads = 0;
  page.on("request", (request) => {
    if (request.method() === "GET" && /\/api\/chats\/[^/?]+\?limit=1$/.test(request.url()))
      reads += 1;
  });
  await picker.selectOption(other);
  await send(page, "And who answers this one?");
  failSave();
  // The page asks what the chat has: the model that answered, so nothing to put back or say.
  await expect.poll(() => reads).toBe(1);
  await expect(picker).toHaveValue(other);
  await expect(page.getByRole("alert").filter({ hasText: "Something went wrong" })).toHaveCount(0);
  await page.unrouteAll({ behavior: "ignoreErrors" });
  await page.reload();
  await hydrated(page);
  await expect(page.getByLabel("Model")).toHaveValue(other);
});

test("a pick whose save hangs gives way to the next pick", async ({ page }) => {
  test.setTimeout(60_000);
  await registerUser(page, `e2e-hung-pick-${Date.now()}@example.com`);
  await newChat(page);
  const picker = page.getByLabel("Model");
  await expect(picker).toHaveValue(FAKE_MODEL);
  await page.waitForLoadState("networkidle");
  const other = await otherModelThan(page, FAKE_MODEL);

  // The chat is on the other model; a pick back to the first one never gets an answer, and
  // the pick after it (the other model again) is saved once that save has given up.
  let patches = 0;
  let hung: { url: string; body: string } | undefined;
  await page.route("**/api/chats/*", async (route) => {
    if (route.request().method() !== "PATCH") return route.continue();
    patches += 1;
    if (patches === 2) {
      hung = { url: route.request().url(), body: route.request().postData() ?? "" };
      return new Promise<void>(() => {});
    }
    return route.continue();
  });
  await picker.selectOption(other);
  await expect.poll(() => patches).toBe(1);
  await page.waitForLoadState("networkidle");
  await picker.selectOption(FAKE_MODEL);
  await expect.poll(() => patches).toBe(2);
  await picker.selectOption(other);
  await expect.poll(() => patches, { timeout: 30_000 }).toBe(3);
  await page.waitForLoadState("networkidle");
  await page.unrouteAll({ behavior: "ignoreErrors" });
  await expect(picker).toHaveValue(other);
  await expect(page.getByRole("alert").filter({ hasText: "could not be reached" })).toHaveCount(0);

  // The hung save reaches the server at last, after the later pick was saved: it is refused,
  // and the chat stays on the later pick.
  const late = await page.evaluate(
    async ({ url, body }) =>
      (await fetch(url, { method: "PATCH", headers: { "content-type": "application/json" }, body }))
        .status,
    hung ?? { url: "", body: "" },
  );
  expect(late).toBe(409);

  await page.reload();
  await hydrated(page);
  await expect(page.getByLabel("Model")).toHaveValue(other);
});

test("an unsent draft stays with its chat when you open another one and come back", async ({
  page,
}) => {
  await registerUser(page, `e2e-draft-${Date.now()}@example.com`);
  await newChat(page);
  await send(page, "First chat");
  const first = page.url();
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("Half a thought about the harbour");

  await newChat(page);
  await expect(box).toHaveValue("");
  await page
    .getByRole("navigation", { name: "Chats" })
    .getByRole("link", { name: "First chat" })
    .click();
  await expect(page).toHaveURL(first);
  await expect(box).toHaveValue("Half a thought about the harbour");

  // Sent, it is no draft any more.
  await send(page, "Half a thought about the harbour, finished");
  await page.reload();
  await hydrated(page);
  await expect(box).toHaveValue("");
});
