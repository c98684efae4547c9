import { expect, type Locator, test } from "@playwright/test";
import { SCRIPT_PATH } from "../fixtures/fake-openai/server";
import { hydrated, openNewChat, PASSWORD, registerUser, send } from "./helpers";
import { MAIN_FAKE_PORT } from "./servers";

/** Edges of the chat page's chrome: the ring without a reading, and the phone drawer. */

test("the ring asks before compacting when it has no reading of the chat, and Cancel or Escape gives the focus back to it", async ({
  page,
}) => {
  await registerUser(page, `e2e-ring-unread-${Date.now()}@example.com`);
  // Every reading of the chat's context fails: the ring has nothing to go on.
  await page.route("**/api/chats/*/context**", (route) =>
    route.fulfill({
      status: 503,
      contentType: "application/json",
      body: JSON.stringify({
        error: { code: "unavailable:model", message: "Context usage unavailable." },
      }),
    }),
  );
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveURL(/\/chat\/[0-9a-f-]{36}$/, { timeout: 20_000 });
  await hydrated(page);
  const ring = page.getByTestId("context-ring");
  await expect(ring).toHaveAttribute("aria-label", /Context usage unavailable/);
  await ring.click();
  const ask = page.getByRole("alertdialog", { name: "Compact this chat now?" });
  await expect(ask).toContainText("cannot tell right now how full this chat is");
  await ask.getByRole("button", { name: "Cancel" }).click();
  await expect(ask).toHaveCount(0);
  // Opened by the ring rather than a dialog trigger, it still hands the focus back to it.
  await expect(ring).toBeFocused();
  await ring.press("Enter");
  await expect(ask).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(ask).toHaveCount(0);
  await expect(ring).toBeFocused();
});

test("a ring whose reading failed looks broken, not loading, and fills in by itself once the server answers", async ({
  page,
}) => {
  await registerUser(page, `e2e-ring-retry-${Date.now()}@example.com`);
  // The first reading finds the server unavailable; the next ones reach it.
  let failed = 0;
  await page.route("**/api/chats/*/context**", (route) => {
    if (failed++ > 0) return route.fallback();
    return route.fulfill({
      status: 503,
      contentType: "application/json",
      body: JSON.stringify({
        error: { code: "unavailable:database", message: "Fold's database is unavailable." },
      }),
    });
  });
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveURL(/\/chat\/[0-9a-f-]{36}$/, { timeout: 20_000 });
  await hydrated(page);
  const ring = page.getByTestId("context-ring");
  await expect(ring).toHaveAttribute("data-tone", "unavailable");
  await expect(ring).toHaveAttribute("aria-label", /database is unavailable/);
  // Nobody clicks anything: the ring tries again and shows the chat's reading.
  await expect(ring).toHaveAttribute("aria-label", /context used: [\d,]+ of [\d,]+ tokens/, {
    timeout: 15_000,
  });
  await expect(ring).not.toHaveAttribute("data-tone", /unavailable|unknown/);
  expect(failed).toBeGreaterThanOrEqual(2);
});

test("the phone drawer: Escape in a title box cancels the rename, and a wider screen closes it", async ({
  page,
}) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await registerUser(page, `e2e-drawer-${Date.now()}@example.com`);
  await page.getByRole("button", { name: "Open the chat list" }).click();
  const drawer = page.getByRole("dialog", { name: "Chats" });
  await expect(drawer).toBeVisible();
  await drawer.getByRole("button", { name: "New chat", exact: true }).click();
  await expect(page).toHaveURL(/\/chat\/[0-9a-f-]{36}$/, { timeout: 20_000 });
  await hydrated(page);

  await page.getByRole("button", { name: "Open the chat list" }).click();
  await expect(drawer).toBeVisible();
  // A pointer that can hover shows a chat's actions on hover.
  await drawer.getByRole("listitem").first().hover();
  await drawer
    .getByRole("button", { name: /^Rename / })
    .first()
    .click();
  const title = drawer.getByRole("textbox", { name: "Chat title" });
  await expect(title).toBeFocused();
  await title.press("Escape");
  await expect(title).toHaveCount(0);
  await expect(drawer).toBeVisible();

  // Rotated, or the window widened: the column shows, and the page behind answers clicks.
  await page.setViewportSize({ width: 1024, height: 768 });
  await expect(drawer).toHaveCount(0);
  await page.locator("aside").getByRole("button", { name: "New chat", exact: true }).click();
  await expect(page).toHaveURL(/\/chat\/[0-9a-f-]{36}$/, { timeout: 20_000 });
});

test("a chat picked in the phone drawer says it is opening until it is read, then the drawer closes; the open one closes it at once", async ({
  page,
}) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await registerUser(page, `e2e-drawer-pick-${Date.now()}@example.com`);
  const menu = page.getByRole("button", { name: "Open the chat list" });
  const drawer = page.getByRole("dialog", { name: "Chats" });
  const ids: string[] = [];
  for (let i = 0; i < 2; i++) {
    await menu.click();
    await drawer.getByRole("button", { name: "New chat", exact: true }).click();
    await expect(page).toHaveURL(/\/chat\/[0-9a-f-]{36}$/, { timeout: 20_000 });
    await hydrated(page);
    await expect(drawer).toHaveCount(0);
    ids.push(new URL(page.url()).pathname.slice("/chat/".length));
    // A chat with nothing in it is the one New chat opens again: this one gets a message.
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill(`Chat ${i + 1}`);
    await box.press("Enter");
    await expect(page.getByRole("button", { name: "Message stats" })).toHaveCount(1);
  }
  expect(ids[0]).not.toBe(ids[1]);

  // The server is slow to read the first chat: its page is held until the test lets it go.
  const { promise: held, resolve: release } = Promise.withResolvers<void>();
  await page.route(`**/chat/${ids[0]}**`, async (route) => {
    if (!route.request().headers()["next-router-prefetch"]) await held;
    await route.continue();
  });
  await menu.click();
  const picked = drawer.locator(`a[href="/chat/${ids[0]}"]`);
  await picked.click();
  await expect(picked.getByRole("status")).toHaveText("Opening…");
  // The chat shown behind is not the one picked: the drawer stays over it meanwhile.
  await expect(drawer).toBeVisible();
  release();
  await expect(drawer).toHaveCount(0);
  await expect(page).toHaveURL(new RegExp(`/chat/${ids[0]}$`));
  await expect(page.locator("[data-role=user]")).toHaveText("Chat 1");
  await page.unrouteAll();

  // The chat already open, picked again: nothing to read, the drawer just closes.
  await menu.click();
  await drawer.locator(`a[href="/chat/${ids[0]}"]`).click();
  await expect(drawer).toHaveCount(0);
  await expect(page).toHaveURL(new RegExp(`/chat/${ids[0]}$`));
});

test("Load older messages keeps the keyboard's focus while it loads, and hands it to the messages once the chat's start is in", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await openNewChat(page, `e2e-older-${Date.now()}@example.com`);
  const chatId = new URL(page.url()).pathname.split("/").pop() ?? "";
  // More messages than the page opens with (50): 26 turns, sent over the API for speed.
  for (let turn = 1; turn <= 26; turn++) {
    const response = await page.request.post("/api/chat", {
      headers: { origin: new URL(page.url()).origin },
      data: {
        trigger: "submit-message",
        chatId,
        message: {
          id: `older-${turn}-${Date.now()}`,
          role: "user",
          parts: [{ type: "text", text: `Message number ${turn}` }],
        },
      },
    });
    expect(response.status(), await response.text()).toBe(200);
  }
  await page.reload();
  await hydrated(page);
  const older = page.getByRole("button", { name: /older messages/ });
  await expect(older).toBeVisible();
  // Slow enough to be seen loading.
  await page.route("**/api/chats/*?before=*", async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 800));
    await route.fallback();
  });
  await older.focus();
  await older.press("Enter");
  await expect(older).toHaveText("Loading older messages…");
  await expect(older).toBeFocused();
  // The last page: the button goes, and the focus with it to the messages, not the page.
  await expect(older).toHaveCount(0);
  const messages = page.getByRole("region", { name: "Messages" });
  await expect(
    messages.locator("[data-role='user']").getByText("Message number 1", { exact: true }),
  ).toBeAttached();
  await expect(messages).toBeFocused();
});

/** Whether a text box's placeholder fits on one line of it, as the page paints it. */
async function placeholderFits(box: import("@playwright/test").Locator) {
  return box.evaluate((element: HTMLTextAreaElement) => {
    const style = getComputedStyle(element);
    const context = document.createElement("canvas").getContext("2d");
    if (!context) throw new Error("no canvas");
    context.font = style.font;
    const room =
      element.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return {
      fits: context.measureText(element.placeholder).width <= room,
      text: element.placeholder,
    };
  });
}

test("the message box's hint stays on one line in a phone-narrow window, and names the keys where there is room", async ({
  page,
}) => {
  // A desktop window made narrow: a mouse, no touch, so the keys' hint would apply.
  await page.setViewportSize({ width: 390, height: 844 });
  await registerUser(page, `e2e-hint-${Date.now()}@example.com`);
  const home = page.locator("textarea");
  await expect(home).toHaveCount(1);
  const start = await placeholderFits(home);
  expect(start, start.text).toMatchObject({ fits: true });
  await page.getByRole("button", { name: "Open the chat list" }).click();
  await page
    .getByRole("dialog", { name: "Chats" })
    .getByRole("button", { name: "New chat", exact: true })
    .click();
  await expect(page).toHaveURL(/\/chat\/[0-9a-f-]{36}$/, { timeout: 20_000 });
  await hydrated(page);
  const box = page.getByRole("textbox", { name: "Message" });
  await expect(box).toBeVisible();
  const narrow = await placeholderFits(box);
  expect(narrow, narrow.text).toMatchObject({ fits: true });

  await page.setViewportSize({ width: 1024, height: 768 });
  await expect(box).toHaveAttribute("placeholder", /Enter to send, Shift\+Enter for a new line/);
  const wide = await placeholderFits(box);
  expect(wide, wide.text).toMatchObject({ fits: true });
});

test("typing goes where the page is for: the sign-in and sign-up forms' first field, the home page's message box", async ({
  page,
}) => {
  await page.goto("/login");
  await hydrated(page);
  await expect(page.getByLabel("Email")).toBeFocused();
  await page.goto("/register");
  await hydrated(page);
  await expect(page.getByLabel("Name")).toBeFocused();
  await registerUser(page, `e2e-first-focus-${Date.now()}@example.com`);
  await page.goto("/");
  await hydrated(page);
  const box = page.getByRole("textbox", { name: "Message" });
  await expect(box).toBeEnabled();
  await expect(box).toBeFocused();
  // The first message starts a chat: its page's message box has the keyboard for the next one.
  await page.getByLabel("Model").selectOption("fake:fake-model");
  await box.fill("Start here");
  await box.press("Enter");
  await expect(page).toHaveURL(/\/chat\/[0-9a-f-]{36}$/, { timeout: 20_000 });
  await expect(page.locator("[data-role=assistant]").last()).toContainText(
    "Fake reply to: Start here",
    { timeout: 20_000 },
  );
  await expect(page.getByRole("textbox", { name: "Message" })).toBeFocused();
});

test("Arabic and Hebrew read right to left where they are written: the message, each paragraph of the reply, the chat's title, the boxes as typed; code stays left to right", async ({
  page,
}) => {
  const direction = (locator: Locator) =>
    locator.evaluate((element) => getComputedStyle(element).direction);
  await openNewChat(page, `e2e-rtl-${Date.now()}@example.com`);
  await page.getByLabel("Model").selectOption("fake:fake-model");
  const scripted = await page.request.post(`http://127.0.0.1:${MAIN_FAKE_PORT}${SCRIPT_PATH}`, {
    data: [{ text: "שלום, הנה התשובה.\n\nAn English line.\n\n```js\nconst x = 1;\n```" }],
  });
  expect(scripted.ok()).toBe(true);
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("مرحبا، كيف حالك؟");
  expect(await direction(box)).toBe("rtl");
  await send(page, "مرحبا، كيف حالك؟");
  await expect(page.getByRole("button", { name: "Message stats" })).toHaveCount(1);

  const asked = page.locator("[data-role=user]").getByText("مرحبا، كيف حالك؟");
  expect(await direction(asked)).toBe("rtl");
  const reply = page.locator("[data-role=assistant]");
  expect(await direction(reply.getByText("שלום, הנה התשובה."))).toBe("rtl");
  expect(await direction(reply.getByText("An English line."))).toBe("ltr");
  expect(await direction(reply.locator("pre"))).toBe("ltr");
  const title = page.getByRole("heading", { level: 1, name: "مرحبا، كيف حالك؟" });
  expect(await direction(title)).toBe("rtl");
  // An empty box goes back to the page's direction.
  await box.fill("Hello");
  expect(await direction(box)).toBe("ltr");
});

test("a text file dropped on the message box joins the draft under its name; a picture is refused with a reason; a file dropped elsewhere leaves the chat in place", async ({
  page,
}) => {
  await openNewChat(page, `e2e-drop-${Date.now()}@example.com`);
  await page.getByLabel("Model").selectOption("fake:fake-model");
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("Please review:");
  const chatUrl = page.url();

  const files = await page.evaluateHandle(() => {
    const transfer = new DataTransfer();
    transfer.items.add(new File(["const answer = 42;\n"], "answer.ts", { type: "video/mp2t" }));
    const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    transfer.items.add(new File([png], "photo.png", { type: "image/png" }));
    return transfer;
  });
  await box.dispatchEvent("dragover", { dataTransfer: files });
  await box.dispatchEvent("drop", { dataTransfer: files });
  await expect(box).toHaveValue("Please review:\n\nanswer.ts:\n```\nconst answer = 42;\n```");
  await expect(page.getByTestId("drop-problem")).toContainText("photo.png is not a text file");
  // Typing again clears the reason.
  await box.press("End");
  await box.press("Shift+Enter");
  await box.pressSequentially("Thanks");
  await expect(page.getByTestId("drop-problem")).toHaveCount(0);

  // Outside the box the page takes the drop (a browser would otherwise leave to show the file).
  const taken = await page.evaluate(() => {
    const transfer = new DataTransfer();
    transfer.items.add(new File(["hello"], "stray.txt", { type: "text/plain" }));
    const init = { bubbles: true, cancelable: true, dataTransfer: transfer };
    const over = new DragEvent("dragover", init);
    const drop = new DragEvent("drop", init);
    const list = document.querySelector("[data-testid=message-scroller]") ?? document.body;
    list.dispatchEvent(over);
    list.dispatchEvent(drop);
    return { over: over.defaultPrevented, drop: drop.defaultPrevented };
  });
  expect(taken).toEqual({ over: true, drop: true });
  expect(page.url()).toBe(chatUrl);
  await expect(box).toHaveValue(/Please review:[\s\S]*Thanks$/);

  await box.press("Enter");
  await expect(page.locator("[data-role=user]").last()).toContainText("answer.ts:");
  await expect(page.locator("[data-role=assistant]").last()).toContainText(
    "Fake reply to: Please review:",
    { timeout: 20_000 },
  );
});

test("a chat opened from a link while signed out opens once signed in; a link that would leave the server goes home", async ({
  page,
}) => {
  const email = `e2e-return-${Date.now()}@example.com`;
  await openNewChat(page, email);
  const chatUrl = page.url();
  const signInAs = async () => {
    await hydrated(page);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
  };

  await page.context().clearCookies();
  await page.goto(chatUrl);
  await expect(page).toHaveURL(/\/login\?next=%2Fchat%2F[0-9a-f-]{36}$/);
  await signInAs();
  await expect(page).toHaveURL(chatUrl, { timeout: 20_000 });
  await expect(page.getByRole("textbox", { name: "Message" })).toBeVisible();

  await page.context().clearCookies();
  await page.goto("/login?next=//example.org/");
  await signInAs();
  await expect(page.getByRole("heading", { name: "Welcome to Fold" })).toBeVisible();
  expect(new URL(page.url()).pathname).toBe("/");
});

test("a reply cut off when the provider's connection dropped says so, and leaves the page with the next message: it was never stored", async ({
  page,
}) => {
  await openNewChat(page, `e2e-cut-${Date.now()}@example.com`);
  await page.getByLabel("Model").selectOption("fake:fake-model");
  const scripted = await page.request.post(`http://127.0.0.1:${MAIN_FAKE_PORT}${SCRIPT_PATH}`, {
    data: [
      {
        fault: "cut",
        text: "Half of an answer that never arrives in full, because the line drops here.",
        afterChars: 24,
      },
    ],
  });
  expect(scripted.ok()).toBe(true);
  const replies = page.locator("[data-role=assistant]");
  await send(page, "Tell me something long");
  await expect(page.getByText(/connection dropped mid-reply/)).toBeVisible({ timeout: 20_000 });
  await expect(page.getByText(/refused the request/)).toHaveCount(0);
  await expect(replies).toHaveCount(1);
  await expect(replies.first()).toContainText("Half of an answer");
  // A note added meanwhile puts its entry after the broken-off reply.
  await page.getByRole("button", { name: "Memory" }).click();
  const notes = page
    .getByRole("dialog", { name: "What the model remembers" })
    .getByRole("region", { name: "Notes the model keeps" });
  await notes.getByRole("textbox", { name: "New note" }).fill("Answer briefly.");
  await notes.getByRole("textbox", { name: "New note" }).press("Enter");
  await expect(notes.getByTestId("memory-notes")).toContainText("Answer briefly.");
  await page.keyboard.press("Escape");
  await expect(page.getByText("Note added by you")).toBeVisible();

  await send(page, "Next message after the cut");
  await expect(replies.last()).toContainText("Fake reply to: Next message after the cut", {
    timeout: 20_000,
  });
  // The note's entry and the reply: the broken-off reply is gone from the page.
  await expect(page.getByText("Half of an answer")).toHaveCount(0);
  await expect(replies).toHaveCount(2);
  // As stored: the first message unanswered, the note, the second message and its reply.
  await page.reload();
  await hydrated(page);
  await expect(replies.last()).toContainText("Fake reply to: Next message after the cut");
  await expect(replies).toHaveCount(2);
  await expect(page.getByText("Half of an answer")).toHaveCount(0);
  await expect(page.locator("[data-role=user]")).toHaveCount(2);
});
