import { expect, type Page, type Request, test } from "@playwright/test";
import { SCRIPT_PATH } from "../fixtures/fake-openai/server";
import { hydrated, openNewChat, registerUser } from "./helpers";
import { MAIN_FAKE_PORT } from "./servers";

/**
 * The sidebar's chat list: paging older chats, where focus goes after a rename or delete, and
 * deleting the open chat.
 */

/** One chat more than the first page holds (50): the oldest is only reached by asking. */
const CHATS_PAST_FIRST_PAGE = 51;

/** Creates chats titled `title 0` (oldest) to `title n-1` through the API; their ids, oldest first. */
async function createChats(page: Page, count: number, title: string): Promise<string[]> {
  return page.evaluate(
    async ({ count, title }) => {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const response = await fetch("/api/chats", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ title: `${title} ${i}` }),
        });
        ids.push(((await response.json()) as { chat: { id: string } }).chat.id);
      }
      return ids;
    },
    { count, title },
  );
}

/** Requests for a page of older chats (the first page comes with the page itself). */
function isOlderPage(url: URL): boolean {
  return url.pathname === "/api/chats" && url.searchParams.has("before");
}

test("Show older chats says it is loading and asks for one page at a time", async ({ page }) => {
  test.setTimeout(90_000);
  await registerUser(page, `e2e-older-loading-${Date.now()}@example.com`);
  const [oldest] = await createChats(page, CHATS_PAST_FIRST_PAGE, "paged");
  await page.goto("/");
  await hydrated(page);

  // The page is held back until the test has looked at the button while it loads.
  let asked = 0;
  const { promise: held, resolve: answer } = Promise.withResolvers<void>();
  await page.route(isOlderPage, async (route) => {
    asked++;
    await held;
    await route.continue();
  });

  const list = page.getByRole("navigation", { name: "Chats" });
  const more = list.getByRole("button", { name: "Show older chats" });
  await more.dblclick();
  const loading = list.getByRole("button", { name: "Loading…" });
  await expect(loading).toBeDisabled();
  await expect(loading).toHaveAttribute("aria-busy", "true");
  // A further click while the page loads asks for nothing more.
  await loading.click({ force: true });

  answer();
  await expect(list.locator(`a[href="/chat/${oldest}"]`)).toHaveCount(1);
  await expect(list.getByRole("button", { name: /Show older chats|Loading…/ })).toHaveCount(0);
  // Any second request would have reached the route by the time the first one's chats show.
  expect(asked).toBe(1);
  // The button went with the last page: the keyboard's focus went on to the chat it brought.
  await expect(list.locator(`a[href="/chat/${oldest}"]`)).toBeFocused();
});

test("older chats still show after the last chat listed was deleted in another tab", async ({
  page,
}) => {
  test.setTimeout(90_000);
  await registerUser(page, `e2e-older-deleted-${Date.now()}@example.com`);
  const [oldest, lastListed] = await createChats(page, CHATS_PAST_FIRST_PAGE, "paged");
  await page.goto("/");
  await hydrated(page);
  const list = page.getByRole("navigation", { name: "Chats" });
  await expect(list.locator(`a[href="/chat/${lastListed}"]`)).toHaveCount(1);

  // Another tab deletes the chat this one would page after.
  const status = await page.evaluate(
    async (id) =>
      (
        await fetch(`/api/chats/${id}`, {
          method: "DELETE",
          headers: { "content-type": "application/json" },
        })
      ).status,
    lastListed,
  );
  expect(status).toBeLessThan(300);

  await list.getByRole("button", { name: "Show older chats" }).click();
  await expect(list.locator(`a[href="/chat/${oldest}"]`)).toHaveCount(1);
  await expect(page.locator("aside").getByRole("alert")).toHaveCount(0);
  await expect(list.getByRole("button", { name: "Show older chats" })).toHaveCount(0);
});

test("the open chat is listed and marked when it is older than the chats loaded", async ({
  page,
}) => {
  test.setTimeout(90_000);
  await registerUser(page, `e2e-open-older-${Date.now()}@example.com`);
  const [oldest] = await createChats(page, CHATS_PAST_FIRST_PAGE, "paged");
  // Opened by its address (a link, a bookmark, a reload): the first page does not hold it.
  await page.goto(`/chat/${oldest}`);
  await hydrated(page);
  const list = page.getByRole("navigation", { name: "Chats" });
  const entry = list.locator(`a[href="/chat/${oldest}"]`);
  await expect(entry).toHaveCount(1);
  await expect(entry).toHaveAttribute("aria-current", "page");
  await expect(entry).toContainText("paged 0");
  // Listed after the chats loaded, not in their place: the chats between are still to come.
  await expect(list.locator('a[href^="/chat/"]').last()).toHaveAttribute("href", `/chat/${oldest}`);

  // The page of older chats brings it in its place, listed once.
  await list.getByRole("button", { name: "Show older chats" }).click();
  await expect(list.getByRole("button", { name: "Show older chats" })).toHaveCount(0);
  await expect(list.locator('a[href^="/chat/"]')).toHaveCount(CHATS_PAST_FIRST_PAGE);
  await expect(entry).toHaveAttribute("aria-current", "page");
});

test("focus stays in the chat list after a rename or a delete", async ({ page }) => {
  await registerUser(page, `e2e-list-focus-${Date.now()}@example.com`);
  await createChats(page, 3, "focus");
  await page.goto("/");
  await hydrated(page);
  const list = page.getByRole("navigation", { name: "Chats" });
  const entry = (title: string) => list.getByRole("listitem").filter({ hasText: title });

  // Clicking away keeps what was typed, as any title box does, and leaves focus where it went.
  await entry("focus 2").hover();
  await list.getByRole("button", { name: "Rename focus 2" }).click();
  const titleBox = list.getByRole("textbox", { name: "Chat title" });
  await titleBox.fill("focus 2 typed");
  await page.getByRole("textbox", { name: "Message" }).click();
  await expect(titleBox).toHaveCount(0);
  await expect(list.getByRole("link", { name: "focus 2 typed" })).toBeVisible();
  await expect(page.getByRole("textbox", { name: "Message" })).toBeFocused();
  await entry("focus 2 typed").hover();
  await list.getByRole("button", { name: "Rename focus 2 typed" }).click();
  await titleBox.fill("focus 2");
  await titleBox.press("Enter");

  // Enter in the title box saves it, and focus goes back to that chat's entry.
  await entry("focus 1").hover();
  await list.getByRole("button", { name: "Rename focus 1" }).click();
  await titleBox.fill("focus renamed");
  await titleBox.press("Enter");
  await expect(list.getByRole("link", { name: "focus renamed" })).toBeFocused();

  // Escape leaves the title as it was, and focus with it.
  await list.getByRole("button", { name: "Rename focus renamed" }).click();
  await titleBox.press("Escape");
  await expect(list.getByRole("link", { name: "focus renamed" })).toBeFocused();

  // An empty or spaces-only title is not taken, nor quietly dropped: the box stays open and says
  // why, by Enter, by Save and by clicking away; typing takes the hint away.
  const hint = list.getByRole("alert");
  await list.getByRole("button", { name: "Rename focus renamed" }).click();
  await titleBox.fill("   ");
  await titleBox.press("Enter");
  await expect(hint).toHaveText("A chat needs a title.");
  await expect(titleBox).toBeFocused();
  await expect(titleBox).toHaveAccessibleDescription("A chat needs a title.");
  await titleBox.fill("");
  await expect(hint).toHaveCount(0);
  await list.getByRole("button", { name: "Save title" }).click();
  await expect(hint).toHaveText("A chat needs a title.");
  await page.getByRole("textbox", { name: "Message" }).click();
  await expect(titleBox).toHaveValue("");
  await expect(hint).toHaveText("A chat needs a title.");
  // Cancel keeps the title it had.
  await list.getByRole("button", { name: "Cancel rename" }).click();
  await expect(hint).toHaveCount(0);
  await expect(list.getByRole("link", { name: "focus renamed" })).toBeFocused();

  // The list now reads: focus renamed, focus 2, focus 0.
  await expect(list.getByRole("link")).toHaveText(["focus renamed", "focus 2", "focus 0"]);
  const confirm = page.getByRole("alertdialog", { name: "Delete this chat?" });
  async function remove(title: string) {
    await entry(title).hover();
    await list.getByRole("button", { name: `Delete ${title}` }).click();
    await confirm.getByRole("button", { name: "Delete", exact: true }).click();
    await expect(list.getByRole("link", { name: title })).toHaveCount(0);
  }
  // A deleted chat hands focus to the next entry, the last one to the one before it...
  await remove("focus 2");
  await expect(list.getByRole("link", { name: "focus 0" })).toBeFocused();
  await remove("focus 0");
  await expect(list.getByRole("link", { name: "focus renamed" })).toBeFocused();
  // ...and the only one to "New chat".
  await remove("focus renamed");
  await expect(page.getByRole("button", { name: "New chat", exact: true })).toBeFocused();
});

test("the first chat's focus ring is drawn whole, not cut off by the top of the scrolling list", async ({
  page,
}) => {
  await registerUser(page, `e2e-list-ring-${Date.now()}@example.com`);
  await createChats(page, 2, "ring");
  await page.goto("/");
  await hydrated(page);
  const list = page.getByRole("navigation", { name: "Chats" });
  const first = list.getByRole("link").first();
  await expect(first).toHaveText("ring 1");
  const box = await first.boundingBox();
  if (!box) throw new Error("the first chat's link is not on screen");
  // The strip just above the link: the ring is drawn there, unless the list's edge clips it.
  const above = { x: box.x, y: box.y - 3, width: box.width, height: 3 };

  // From "New chat", Tab reaches the first chat: the keyboard's focus shows its ring.
  await page.getByRole("button", { name: "New chat", exact: true }).focus();
  const ringless = await page.screenshot({ clip: above });
  await page.keyboard.press("Tab");
  await expect(first).toBeFocused();
  const ringed = await page.screenshot({ clip: above });
  expect(ringed.equals(ringless), "no focus ring is drawn above the first chat").toBe(false);
});

test("the delete confirm holds a long title, and a delete called off leaves focus on the chat", async ({
  page,
}) => {
  await registerUser(page, `e2e-list-cancel-${Date.now()}@example.com`);
  const long = `unbroken-${"x".repeat(150)}`;
  await createChats(page, 1, long);
  await page.goto("/");
  await hydrated(page);
  const list = page.getByRole("navigation", { name: "Chats" });
  const link = list.getByRole("link", { name: `${long} 0` });
  const confirm = page.getByRole("alertdialog", { name: "Delete this chat?" });

  // By keyboard: the chat's link, then Rename, then Delete.
  await link.focus();
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  await expect(list.getByRole("button", { name: `Delete ${long} 0` })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(confirm).toBeVisible();
  // The title wraps inside the dialog rather than running out of it.
  const fits = await confirm.evaluate((dialog) => {
    const box = dialog.getBoundingClientRect();
    return [...dialog.querySelectorAll("*")].every(
      (el) =>
        el.getBoundingClientRect().right <= box.right + 1 && el.scrollWidth <= el.clientWidth + 1,
    );
  });
  expect(fits).toBe(true);
  await page.keyboard.press("Escape");
  await expect(confirm).toHaveCount(0);
  await expect(link).toBeFocused();

  // Called off with Cancel, by mouse: the same.
  await list.getByRole("listitem").first().hover();
  await list.getByRole("button", { name: `Delete ${long} 0` }).click();
  await confirm.getByRole("button", { name: "Cancel" }).click();
  await expect(link).toBeFocused();
  await expect(link).toBeVisible();
});

test("New chat opens its chat with the message box ready for typing", async ({ page }) => {
  await registerUser(page, `e2e-list-new-${Date.now()}@example.com`);
  const newChat = page.getByRole("button", { name: "New chat", exact: true });
  await newChat.focus();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/chat\/[0-9a-f-]{36}$/, { timeout: 20_000 });
  await hydrated(page);
  const box = page.getByRole("textbox", { name: "Message" });
  await expect(box).toBeFocused();
  await page.keyboard.type("typed at once");
  await expect(box).toHaveValue("typed at once");
});

test("deleting the open chat while it replies goes home, and nothing asks for that chat again", async ({
  page,
}) => {
  await openNewChat(page, `e2e-list-delete-open-${Date.now()}@example.com`);
  const chatId = new URL(page.url()).pathname.split("/").at(-1) ?? "";
  await page.getByLabel("Model").selectOption("fake:fake-model");
  // A reply slow to start: the delete finds it running, and stops it.
  const scripted = await page.request.post(`http://127.0.0.1:${MAIN_FAKE_PORT}${SCRIPT_PATH}`, {
    data: [{ fault: "slow", delayMs: 4_000, text: "A reply nobody will read." }],
  });
  expect(scripted.ok()).toBe(true);
  const turnStarted = page.waitForResponse(
    (r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/api/chat",
  );
  await page.getByRole("textbox", { name: "Message" }).fill("Take your time.");
  await page.getByRole("button", { name: "Send message" }).click();
  const turn = await turnStarted;
  expect(turn.ok()).toBe(true);
  // Its stream ends as the delete stops the reply, or fails as the page lets it go.
  const { promise: turnOver, resolve: endTurn } = Promise.withResolvers<void>();
  const ends = (request: Request) => {
    if (request === turn.request()) endTurn();
  };
  page.on("requestfinished", ends);
  page.on("requestfailed", ends);

  // From the delete on, nothing the page asks about this chat may be refused (a 404 for a chat
  // it no longer has), nor may the console report any failure.
  const refused: string[] = [];
  const consoleErrors: string[] = [];
  const list = page.getByRole("navigation", { name: "Chats" });
  const entry = list.locator(`[data-chat-id="${chatId}"]`);
  await entry.hover();
  await entry.getByRole("button", { name: /^Delete / }).click();
  page.on("response", (response) => {
    if (response.url().includes(chatId) && response.status() >= 400) {
      refused.push(`${response.status()} ${response.request().method()} ${response.url()}`);
    }
  });
  page.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(message.text());
  });
  await page
    .getByRole("alertdialog", { name: "Delete this chat?" })
    .getByRole("button", { name: "Delete", exact: true })
    .click();

  // Home, the chat gone from the list and from the server.
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByRole("heading", { name: "Welcome to Fold" })).toBeVisible();
  await expect(entry).toHaveCount(0);
  expect((await page.request.get(`/api/chats/${chatId}`)).status()).toBe(404);
  // The reply's stream is over, and what its end set off has had its time to be answered.
  await turnOver;
  await page.waitForTimeout(1_500);
  expect(refused).toEqual([]);
  expect(consoleErrors).toEqual([]);
});

test("deleting the open chat deletes it even when the way home is slow to load", async ({
  page,
}) => {
  await openNewChat(page, `e2e-list-delete-slow-${Date.now()}@example.com`);
  const chatId = new URL(page.url()).pathname.split("/").at(-1) ?? "";
  // The home page's data (the app router's request for "/") is held: the page stays on the
  // chat for as long as it waits.
  const { promise: released, resolve: release } = Promise.withResolvers<void>();
  await page.route(
    (url) => url.pathname === "/",
    async (route) => {
      if (route.request().headers().rsc === "1") await released;
      await route.continue().catch(() => undefined);
    },
  );
  const list = page.getByRole("navigation", { name: "Chats" });
  const entry = list.locator(`[data-chat-id="${chatId}"]`);
  await entry.hover();
  await entry.getByRole("button", { name: /^Delete / }).click();
  await page
    .getByRole("alertdialog", { name: "Delete this chat?" })
    .getByRole("button", { name: "Delete", exact: true })
    .click();
  // The delete the user confirmed goes within a few seconds, home or not yet.
  await expect
    .poll(async () => (await page.request.get(`/api/chats/${chatId}`)).status(), {
      timeout: 8_000,
    })
    .toBe(404);
  release();
  await expect(page).toHaveURL(/\/$/);
  await expect(entry).toHaveCount(0);
  await page.unroute((url) => url.pathname === "/");
});
