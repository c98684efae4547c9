import { expect, type Page, test } from "@playwright/test";
import { SCRIPT_PATH } from "../fixtures/fake-openai/server";
import { hydrated, openNewChat, send, signIn } from "./helpers";
import { MAIN_FAKE_PORT } from "./servers";

test("send a message, watch it stream, open its stats, and find it all again after a reload", async ({
  page,
}) => {
  await openNewChat(page, `e2e-chat-${Date.now()}@example.com`);

  const picker = page.getByLabel("Model");
  await expect(picker).toBeEnabled();
  await expect(picker.locator("option", { hasText: "Demo (offline)" })).toHaveCount(1);
  await picker.selectOption("fake:fake-model");

  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("How do context windows work?");
  await box.press("Enter");

  // The user's message shows at once; the answer streams in from the fake provider.
  await expect(page.locator("[data-role=user]")).toContainText("How do context windows work?");
  const answer = page.locator("[data-role=assistant]").last();
  await expect(answer).toContainText("Fake reply to: How do context windows work?");
  await expect(page.getByRole("button", { name: "Message stats" })).toBeVisible();

  await page.getByRole("button", { name: "Message stats" }).click();
  const stats = page.getByRole("dialog", { name: "Stats" });
  await expect(stats).toContainText("Input tokens");
  await expect(stats).toContainText("Time to first token");
  // A readable name, not the raw id.
  await expect(stats).toContainText("fake-model (fake)");
  await expect(stats).not.toContainText("fake:fake-model");
  // The context the reply used, against the window of the model that wrote it.
  await expect(stats).toContainText(/Context tokens[\d.,k]+ \/ [\d.,k]+ \([\d.,<]+\s?%\)/);
  const before = await stats.textContent();
  await page.screenshot({ path: "test-results/chat-stats.png", fullPage: true });
  await page.keyboard.press("Escape");

  // The sidebar picked up the title made from the first message.
  await expect(
    page
      .getByRole("navigation", { name: "Chats" })
      .getByRole("link", { name: "How do context windows work?" }),
  ).toBeVisible();

  await page.reload();
  await hydrated(page);
  await expect(page.locator("[data-role=user]")).toContainText("How do context windows work?");
  await expect(page.locator("[data-role=assistant]").last()).toContainText(
    "Fake reply to: How do context windows work?",
  );
  await page.getByRole("button", { name: "Message stats" }).click();
  const after = page.getByRole("dialog", { name: "Stats" });
  await expect(after).toBeVisible();
  expect(await after.textContent()).toBe(before);
  await expect(page.getByLabel("Model")).toHaveValue("fake:fake-model");
});

test("the stats open and close from the keyboard: Escape gives the focus back to their button without its tooltip covering the reply", async ({
  page,
}) => {
  await openNewChat(page, `e2e-stats-keys-${Date.now()}@example.com`);
  await page.getByLabel("Model").selectOption("fake:fake-model");
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("What is a token?");
  await box.press("Enter");
  const button = page.getByRole("button", { name: "Message stats" });
  await expect(button).toBeVisible();
  // The one-line summary the button's tooltip shows.
  const summary = page.getByText(/ms to first token/);

  await button.focus();
  await expect(summary.first()).toBeVisible();
  await page.keyboard.press("Enter");
  const stats = page.getByRole("dialog", { name: "Stats" });
  await expect(stats).toBeVisible();
  await expect(summary).toHaveCount(0);
  await page.keyboard.press("Escape");
  await expect(stats).toBeHidden();
  await expect(button).toBeFocused();
  // Had it opened, it would have done so as the focus came back: give it that moment.
  await page.waitForTimeout(400);
  await expect(summary).toHaveCount(0);

  // A hover afterwards still shows it.
  await page.mouse.move(0, 0);
  await button.hover();
  await expect(summary.first()).toBeVisible();
});

test("the offline demo model answers and draws on the conversation", async ({ page }) => {
  await openNewChat(page, `e2e-demo-${Date.now()}@example.com`);
  await page.getByLabel("Model").selectOption("demo:demo");
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("My favourite colour is teal.");
  await box.press("Enter");
  await expect(page.getByRole("button", { name: "Message stats" })).toHaveCount(1);
  await box.fill("What did I say earlier?");
  await box.press("Enter");
  await expect(page.getByRole("button", { name: "Message stats" })).toHaveCount(2);
  await expect(page.locator("[data-role=assistant]").last()).toContainText("teal");
});

test("Enter twice on Send sends the message once and does not stop its reply; focus goes to the message box", async ({
  page,
}) => {
  await openNewChat(page, `e2e-double-enter-${Date.now()}@example.com`);
  await page.getByLabel("Model").selectOption("fake:fake-model");
  const stops: string[] = [];
  page.on("request", (request) => {
    if (request.url().endsWith("/stop")) stops.push(request.url());
  });

  // The reply waits a moment before its first byte, so Stop is surely there to be pressed: a
  // reply that ended at once would take it away before the check below could see it.
  const scripted = await page.request.post(`http://127.0.0.1:${MAIN_FAKE_PORT}${SCRIPT_PATH}`, {
    data: [{ fault: "slow", delayMs: 1_500, text: "Here is a long story." }],
  });
  expect(scripted.ok()).toBe(true);
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("Tell me a long story.");
  await page.getByRole("button", { name: "Send message" }).focus();
  await page.keyboard.press("Enter");
  // Stop takes Send's place while the reply streams: the second Enter must not land on it.
  await expect(page.getByRole("button", { name: "Stop" })).toBeVisible();
  await page.keyboard.press("Enter");
  await expect(box).toBeFocused();
  await expect(page.getByRole("button", { name: "Stop" })).toHaveCount(0, { timeout: 20_000 });
  await expect(page.locator("[data-role=assistant]").last()).toContainText("Here is a long story.");
  await expect(page.getByTestId("stopped")).toHaveCount(0);
  expect(stops).toEqual([]);
  await expect(page.locator("[data-role=user]")).toHaveCount(1);
});

test("Stop that the server cannot carry out says why, lets the reply go, and raises no database alarm", async ({
  page,
}) => {
  await openNewChat(page, `e2e-stop-refused-${Date.now()}@example.com`);
  await page.getByLabel("Model").selectOption("fake:fake-model");
  // Redis, between Fold's servers, is down and the reply runs on another instance: Stop is
  // answered as the stop route answers then.
  await page.route("**/api/chats/*/stop", (route) =>
    route.fulfill({
      status: 503,
      contentType: "application/json",
      body: JSON.stringify({
        error: {
          code: "unavailable:live",
          message:
            "Stop cannot reach the reply right now: the channel between Fold's servers (Redis) is unavailable.",
        },
      }),
    }),
  );
  const scripted = await page.request.post(`http://127.0.0.1:${MAIN_FAKE_PORT}${SCRIPT_PATH}`, {
    data: [{ fault: "slow", delayMs: 4_000, text: "A reply that takes its time." }],
  });
  expect(scripted.ok()).toBe(true);
  await page.getByRole("textbox", { name: "Message" }).fill("Take your time.");
  await page.getByRole("button", { name: "Send message" }).click();
  await page.getByRole("button", { name: "Stop" }).click();
  const problem = page.getByRole("alert").filter({ hasText: "Stop cannot reach the reply" });
  await expect(problem).toBeVisible();
  await expect(problem).toContainText("It may still be written and stored.");
  // The page let the stream go: the composer is back.
  await expect(page.getByRole("button", { name: "Stop" })).toHaveCount(0);
  await expect(page.getByRole("alert").filter({ hasText: "can't reach its database" })).toHaveCount(
    0,
  );
  await problem.getByRole("button", { name: "Dismiss" }).click();
  await expect(problem).toBeHidden();
  // The reply went on on the server and is stored: the page shows it once it is.
  await expect(page.locator("[data-role=assistant]").last()).toContainText(
    "A reply that takes its time.",
    { timeout: 20_000 },
  );
});

test("a model picked on a device whose clock is ten minutes behind is kept as the later pick", async ({
  browser,
  page,
}) => {
  const email = `e2e-clock-${Date.now()}@example.com`;
  await openNewChat(page, email);
  const chatUrl = page.url();
  const saved = (on: Page) =>
    on.waitForResponse((r) => r.request().method() === "PATCH" && /\/api\/chats\//.test(r.url()));
  const picker = page.getByLabel("Model");
  await expect(picker).toBeEnabled();
  const first = saved(page);
  await picker.selectOption("fake:fake-model");
  expect((await first).status()).toBe(200);

  // The same user on another device, whose clock reads ten minutes ago.
  const behind = await browser.newContext();
  try {
    await behind.clock.install({ time: Date.now() - 10 * 60_000 });
    const other = await behind.newPage();
    await signIn(other, email);
    await other.goto(chatUrl);
    await hydrated(other);
    const otherPicker = other.getByLabel("Model");
    await expect(otherPicker).toHaveValue("fake:fake-model");
    await expect(otherPicker).toBeEnabled();
    const later = saved(other);
    await otherPicker.selectOption("demo:demo");
    expect((await later).status()).toBe(200);
    await expect(otherPicker).toHaveValue("demo:demo");
    await expect(other.getByText(/could not be changed|later pick/)).toHaveCount(0);
  } finally {
    await behind.close();
  }
  await page.reload();
  await hydrated(page);
  await expect(page.getByLabel("Model")).toHaveValue("demo:demo");
});

test("a reply whose stream drops on the way shows once the page is back, as the server stored it", async ({
  page,
}) => {
  // The page's connection to its own reply breaks mid-way (the server does not notice and goes
  // on): reading the response body fails as a dropped network does.
  await page.addInitScript(() => {
    const original = window.fetch.bind(window);
    window.fetch = async (input, init) => {
      const response = await original(input, init);
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      if (!new URL(url, location.href).pathname.endsWith("/api/chat") || !response.body) {
        return response;
      }
      let drop = (_: Error) => {};
      const dropped = new Promise<never>((_, reject) => {
        drop = reject;
      });
      (window as unknown as { dropReply: () => void }).dropReply = () =>
        drop(new TypeError("network error"));
      const reader = response.body.getReader();
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          try {
            const next = await Promise.race([reader.read(), dropped]);
            if (next.done) controller.close();
            else controller.enqueue(next.value);
          } catch (error) {
            controller.error(error);
          }
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
  });
  await openNewChat(page, `e2e-drop-${Date.now()}@example.com`);
  const picker = page.getByLabel("Model");
  await expect(picker).toBeEnabled();
  await picker.selectOption("fake:fake-model");
  const text = "The reply the server went on writing while the page was away.";
  const scripted = await page.request.post(`http://127.0.0.1:${MAIN_FAKE_PORT}${SCRIPT_PATH}`, {
    data: [{ fault: "slow", delayMs: 3_000, text }],
  });
  expect(scripted.ok()).toBe(true);
  await page.getByRole("textbox", { name: "Message" }).fill("Are you still there?");
  await page.getByRole("button", { name: "Send message" }).click();
  await page.waitForFunction(() => "dropReply" in window);
  await page.evaluate(() => (window as unknown as { dropReply: () => void }).dropReply());

  const answer = page.locator("[data-role=assistant]").last();
  await expect(answer).toContainText(text, { timeout: 20_000 });
  await expect(page.getByRole("button", { name: "Retry" })).toHaveCount(0);
  await expect(page.getByText(/network error/i)).toHaveCount(0);
  await page.reload();
  await hydrated(page);
  await expect(page.locator("[data-role=assistant]").last()).toContainText(text);
  await expect(page.locator("[data-role=assistant]")).toHaveCount(1);
});

test("a message sent from a tab behind the chat is not answered there: the tab shows the chat as it is, the message back in its box", async ({
  page,
}) => {
  await openNewChat(page, `e2e-two-tabs-${Date.now()}@example.com`);
  const picker = page.getByLabel("Model");
  await expect(picker).toBeEnabled();
  await picker.selectOption("fake:fake-model");
  await send(page, "First question from tab A");
  await expect(page.locator("[data-role=assistant]").last()).toContainText(
    "Fake reply to: First question from tab A",
  );

  // The same chat in a second tab, which goes on.
  const other = await page.context().newPage();
  await other.goto(page.url());
  await hydrated(other);
  await send(other, "Question from tab B");
  await expect(other.locator("[data-role=assistant]").last()).toContainText(
    "Fake reply to: Question from tab B",
  );

  // Tab A never saw B's turn.
  await expect(page.locator("[data-role=user]")).toHaveCount(1);
  await send(page, "Second question from tab A");
  await expect(page.getByText(/went on in another tab/)).toBeVisible();
  // B's turn shows now, A's message is back in its box, and it was never answered.
  await expect(page.locator("[data-role=user]").last()).toContainText("Question from tab B");
  await expect(page.getByRole("textbox", { name: "Message" })).toHaveValue(
    "Second question from tab A",
  );
  await expect(page.getByText("Fake reply to: Second question from tab A")).toHaveCount(0);
  // Sent again from the chat as it is: answered after B's turn.
  await page.getByRole("textbox", { name: "Message" }).press("Enter");
  await expect(page.locator("[data-role=assistant]").last()).toContainText(
    "Fake reply to: Second question from tab A",
  );
  await other.close();
});
