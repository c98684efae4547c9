import { expect, type Page, test } from "@playwright/test";
import { SCRIPT_PATH } from "../fixtures/fake-openai/server";
import { hydrated, openNewChat, registerUser } from "./helpers";
import { MAIN_FAKE_PORT } from "./servers";

/** The next reply of the e2e fake provider (it runs in its own process). */
async function scriptReply(page: Page, text: string): Promise<void> {
  const response = await page.request.post(`http://127.0.0.1:${MAIN_FAKE_PORT}${SCRIPT_PATH}`, {
    data: [{ text }],
  });
  expect(response.ok()).toBe(true);
}

/** Sends a message and waits for its finished reply (each reply gets a stats button). */
async function sendAndWait(page: Page, text: string, reply: string) {
  await scriptReply(page, reply);
  const stats = page.getByRole("button", { name: "Message stats" });
  const replies = await stats.count();
  const box = page.getByRole("textbox", { name: "Message" });
  await expect(box).toBeEnabled();
  await box.fill(text);
  await box.press("Enter");
  await expect(stats).toHaveCount(replies + 1, { timeout: 30_000 });
}

/** A new user with a new chat that talks to the fake provider. */
async function openFakeChat(page: Page, name: string): Promise<void> {
  await openNewChat(page, `e2e-${name}-${Date.now()}@example.com`);
  await page.getByLabel("Model").selectOption("fake:fake-model");
}

/**
 * A new chat of `turns` answered questions ("Question 0." on), each sent through POST /api/chat
 * as the page would; returns its id.
 */
async function seedTurns(page: Page, turns: number): Promise<string> {
  return page.evaluate(
    async ({ modelId, turns }) => {
      const created = await fetch("/api/chats", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ modelId }),
      });
      const id = ((await created.json()) as { chat: { id: string } }).chat.id;
      for (let turn = 0; turn < turns; turn++) {
        const body = JSON.stringify({
          trigger: "submit-message",
          chatId: id,
          modelId,
          message: {
            id: crypto.randomUUID(),
            role: "user",
            parts: [{ type: "text", text: `Question ${turn}.` }],
          },
        });
        // The turn before may still be storing its reply: its chat answers 409 until it is.
        for (let attempt = 0; ; attempt++) {
          const response = await fetch("/api/chat", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body,
          });
          await response.text();
          if (response.ok) break;
          if (response.status !== 409 || attempt > 50)
            throw new Error(`turn ${turn}: ${response.status}`);
          await new Promise((wait) => setTimeout(wait, 200));
        }
      }
      return id;
    },
    { modelId: "fake:fake-model", turns },
  );
}

/** Scrolls the timeline to its top until `until` holds (rows measured on the way move it). */
async function scrollToTop(page: Page, until: () => Promise<void>): Promise<void> {
  const scroller = page.getByTestId("message-scroller");
  await expect(async () => {
    await scroller.evaluate((el) => {
      el.scrollTop = 0;
    });
    await until();
  }).toPass({ timeout: 30_000 });
}

const replies = (page: Page) => page.locator("[data-role=assistant]");
const userMessages = (page: Page) => page.locator("[data-role=user]");

test("regenerate keeps the replaced reply a switch away, and asks before it moves later messages", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await openFakeChat(page, "regenerate");

  await sendAndWait(page, "Question one: where does the Douro rise?", "First try at one.");
  await sendAndWait(page, "Question two: and where does it end?", "The answer to two.");

  // Regenerating the first reply would move the second question and its reply: it asks first.
  const first = replies(page).first();
  await first.hover();
  await first.getByRole("button", { name: "Regenerate response" }).click();
  const ask = page.getByRole("alertdialog", { name: "Regenerate this reply?" });
  await expect(ask).toContainText("This removes the 2 messages after it");
  // Cancel changes nothing.
  await ask.getByRole("button", { name: "Cancel" }).click();
  await expect(ask).toHaveCount(0);
  await expect(userMessages(page)).toHaveCount(2);

  await scriptReply(page, "Second try at one.");
  await first.hover();
  await first.getByRole("button", { name: "Regenerate response" }).click();
  await ask.getByRole("button", { name: "Regenerate" }).click();
  await expect(replies(page)).toHaveCount(1);
  await expect(replies(page).first()).toContainText("Second try at one.", { timeout: 30_000 });
  await expect(userMessages(page)).toHaveCount(1);

  // The switch sits on the reply.
  const versions = page.getByRole("group", { name: "Versions of this message" });
  await expect(versions).toContainText("2/2");
  const row = page.locator("div.group\\/message").filter({ has: versions });
  await expect(row.locator("[data-role=assistant]")).toHaveCount(1);
  await expect(row.locator("[data-role=user]")).toHaveCount(0);
  await page.screenshot({ path: "test-results/regenerate-2-of-2.png" });

  // Back: the first reply and everything after it. The messages are drawn anew, and the
  // button pressed, now at its end, keeps the keyboard's focus (it fell to the page before).
  await versions.getByRole("button", { name: "Previous version" }).click();
  await expect(versions).toContainText("1/2");
  await expect(versions.getByRole("button", { name: "Previous version" })).toBeFocused();
  await expect(versions.getByRole("button", { name: "Previous version" })).toHaveAttribute(
    "aria-disabled",
    "true",
  );
  await expect(replies(page).first()).toContainText("First try at one.");
  await expect(page.getByText("The answer to two.")).toBeVisible();
  await expect(userMessages(page)).toHaveCount(2);

  // Forth, then regenerate the last reply: nothing follows it, so no question, a third version.
  await versions.getByRole("button", { name: "Next version" }).click();
  await expect(versions).toContainText("2/2");
  await expect(replies(page).first()).toContainText("Second try at one.");
  await scriptReply(page, "Third try at one.");
  const only = replies(page).first();
  await only.hover();
  await only.getByRole("button", { name: "Regenerate response" }).click();
  await expect(replies(page).first()).toContainText("Third try at one.", { timeout: 30_000 });
  // Regenerate went while the reply streamed: the focus did not fall to the page.
  await expect(page.getByRole("textbox", { name: "Message" })).toBeFocused();
  await expect(ask).toHaveCount(0);
  await expect(versions).toContainText("3/3");

  // Stored: a reload shows the same, and the second try is still there.
  await page.reload();
  await hydrated(page);
  await expect(versions).toContainText("3/3");
  await versions.getByRole("button", { name: "Previous version" }).click();
  await expect(versions).toContainText("2/3");
  await expect(replies(page).first()).toContainText("Second try at one.");
});

test("a double click on Send sends the message once, and its second click does not stop the reply", async ({
  page,
}) => {
  test.setTimeout(90_000);
  await openFakeChat(page, "double-send");
  // The reply waits a moment before its first byte: a Stop in between would leave no reply.
  const response = await page.request.post(`http://127.0.0.1:${MAIN_FAKE_PORT}${SCRIPT_PATH}`, {
    data: [{ fault: "slow", delayMs: 1_500, text: "Answered in full." }],
  });
  expect(response.ok()).toBe(true);
  await page.getByRole("textbox", { name: "Message" }).fill("One question, clicked twice.");
  await page.getByRole("button", { name: "Send message" }).dblclick();
  await expect(replies(page).first()).toContainText("Answered in full.", { timeout: 30_000 });
  await expect(page.getByTestId("stopped")).toHaveCount(0);
  await expect(userMessages(page)).toHaveCount(1);
});

test("an edit box keeps what was typed in it while its message is scrolled out of the DOM", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await openFakeChat(page, "edit-draft");
  // Enough rows that the first is far outside what the timeline keeps rendered (rows leave
  // the DOM, so replies are waited for by their text, not counted).
  const box = page.getByRole("textbox", { name: "Message" });
  for (let turn = 0; turn < 10; turn++) {
    await scriptReply(page, `Answer ${turn}.`);
    await box.fill(`Question ${turn}: ${"a long line of words ".repeat(12)}`);
    await box.press("Enter");
    await expect(replies(page).last()).toHaveText(`Answer ${turn}.`, { timeout: 30_000 });
    await expect(page.getByRole("button", { name: "Send message" })).toBeVisible();
  }
  const scroller = page.getByTestId("message-scroller");
  // Rows measured on the way up move the view (the timeline keeps its end in place): scroll to
  // the top until it stays there.
  const toTop = (until: () => Promise<void>) =>
    expect(async () => {
      await scroller.evaluate((el) => {
        el.scrollTop = 0;
      });
      await until();
    }).toPass({ timeout: 20_000 });
  const first = userMessages(page).first();
  await toTop(() => expect(first).toContainText("Question 0:", { timeout: 1_000 }));
  await first.hover();
  await first.getByRole("button", { name: "Edit message" }).click();
  await page
    .getByRole("textbox", { name: "Edit message" })
    .fill("Question 0, rewritten and not sent yet");

  // Down to the newest message: the first row leaves the DOM.
  await scroller.evaluate((el) => {
    el.scrollTop = el.scrollHeight;
  });
  await expect(page.locator('[data-index="0"]')).toHaveCount(0);
  await toTop(() =>
    expect(page.getByRole("textbox", { name: "Edit message" })).toHaveValue(
      "Question 0, rewritten and not sent yet",
      { timeout: 1_000 },
    ),
  );
});

test("Retry of an unanswered message keeps a note added meanwhile, and answers the message", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await openFakeChat(page, "retry-note");
  // The provider fails, through the SDK's own retries: the message goes unanswered.
  const failing = await page.request.post(`http://127.0.0.1:${MAIN_FAKE_PORT}${SCRIPT_PATH}`, {
    data: [{ fault: "500" }, { fault: "500" }, { fault: "500" }],
  });
  expect(failing.ok()).toBe(true);
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("Where does the Tagus rise?");
  await box.press("Enter");
  const failed = page.getByRole("alert").filter({ hasText: "internal error" });
  await expect(failed).toBeVisible({ timeout: 30_000 });

  // A note added now puts its entry after the message.
  await page.getByRole("button", { name: "Memory" }).click();
  const panel = page.getByRole("dialog", { name: "What the model remembers" });
  const note = panel.getByRole("textbox", { name: "New note" });
  await note.fill("Answer in one sentence.");
  await note.press("Enter");
  await expect(panel.getByTestId("memory-notes")).toContainText("Answer in one sentence.");
  await page.keyboard.press("Escape");
  await expect(page.getByText("Note added by you")).toBeVisible();

  await scriptReply(page, "In the Sierra de Albarracín.");
  await failed.getByRole("button", { name: "Retry" }).click();
  await expect(page.getByRole("button", { name: "Message stats" })).toHaveCount(1, {
    timeout: 30_000,
  });
  await expect(page.getByText("In the Sierra de Albarracín.")).toBeVisible();
  // The note's entry is still on screen, as it is stored: the same after a reload.
  await expect(page.getByText("Note added by you")).toBeVisible();
  await page.reload();
  await hydrated(page);
  await expect(page.getByText("Note added by you")).toBeVisible();
  await expect(page.getByText("In the Sierra de Albarracín.")).toBeVisible();
});

test("Regenerate on a reply a note was added after keeps the note's entry, before the new reply, as it is stored", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await openFakeChat(page, "regenerate-note");
  await sendAndWait(page, "Where does the Ebro rise?", "Near Reinosa.");

  await page.getByRole("button", { name: "Memory" }).click();
  const panel = page.getByRole("dialog", { name: "What the model remembers" });
  const note = panel.getByRole("textbox", { name: "New note" });
  await note.fill("Name the village.");
  await note.press("Enter");
  await expect(panel.getByTestId("memory-notes")).toContainText("Name the village.");
  await page.keyboard.press("Escape");
  const entry = page.getByText("Note added by you");
  await expect(entry).toBeVisible();

  await scriptReply(page, "At Fontibre, near Reinosa.");
  const reply = replies(page).filter({ hasText: "Near Reinosa." });
  await reply.hover();
  await reply.getByRole("button", { name: "Regenerate response" }).click();
  const again = page.getByText("At Fontibre, near Reinosa.");
  await expect(again).toBeVisible({ timeout: 30_000 });
  await expect(page.getByText("Near Reinosa.", { exact: true })).toHaveCount(0);

  // The note still holds, so its entry stays: on screen now and after a reload, before the reply.
  const noteAboveReply = async () => {
    await expect(entry).toBeVisible();
    const [noteBox, replyBox] = [await entry.boundingBox(), await again.boundingBox()];
    expect(noteBox && replyBox && noteBox.y < replyBox.y).toBe(true);
  };
  await expect(noteAboveReply).toPass({ timeout: 10_000 });
  await page.reload();
  await hydrated(page);
  await expect(again).toBeVisible();
  await noteAboveReply();
});

test("in a chat longer than its first page, an edit of a message scrolled back to rewrites from there and keeps what came before", async ({
  page,
}) => {
  test.setTimeout(180_000);
  await registerUser(page, `e2e-older-edit-${Date.now()}@example.com`);
  // 27 turns, 54 messages: the page opens on the newest 50, the first two turns are older.
  const chatId = await seedTurns(page, 27);
  await page.goto(`/chat/${chatId}`);
  await hydrated(page);
  const first = userMessages(page).filter({ hasText: "Question 0." });
  const second = userMessages(page).filter({ hasText: "Question 1." });
  await expect(userMessages(page).filter({ hasText: "Question 26." })).toBeVisible();
  await expect(first).toHaveCount(0);

  // Up to the top: the older page comes in front of the one the chat opened on.
  await scrollToTop(page, () => expect(first).toBeVisible({ timeout: 1_000 }));

  await scriptReply(page, "Answered anew from the second question.");
  await second.hover();
  await second.getByRole("button", { name: "Edit message" }).click();
  const editor = page.getByRole("textbox", { name: "Edit message" });
  await editor.fill("Question 1, asked again.");
  await editor.press("Enter");
  const ask = page.getByRole("alertdialog", { name: "Edit this message?" });
  await expect(ask).toContainText("This removes the 51 messages after it");
  await ask.getByRole("button", { name: "Edit and send" }).click();

  // The timeline is the first turn, the edited question and its new answer: nothing was lost
  // in front of the edit, and nothing of what came after it stays.
  await expect(page.getByText("Answered anew from the second question.")).toBeVisible({
    timeout: 30_000,
  });
  await expect(page.getByRole("button", { name: "Message stats" })).toHaveCount(2);
  await expect(userMessages(page)).toHaveCount(2);
  await expect(userMessages(page)).toContainText(["Question 0.", "Question 1, asked again."]);
  await expect(page.getByText("Question 26.")).toHaveCount(0);
  await expect(page.getByRole("alert").filter({ hasText: /not found|went wrong/ })).toHaveCount(0);

  // Stored so: a reload shows the same two turns.
  await page.reload();
  await hydrated(page);
  await expect(userMessages(page)).toHaveCount(2);
  await expect(userMessages(page)).toContainText(["Question 0.", "Question 1, asked again."]);
  await expect(page.getByText("Answered anew from the second question.")).toBeVisible();
});

test("in a chat with older pages loaded, a regenerate that comes due after a version switch went and came back does not put those pages in twice", async ({
  page,
}) => {
  test.setTimeout(180_000);
  await registerUser(page, `e2e-older-switch-${Date.now()}@example.com`);
  const chatId = await seedTurns(page, 27);
  await page.goto(`/chat/${chatId}`);
  await hydrated(page);
  // A second version of the last reply (nothing follows it: no question first).
  await scriptReply(page, "The second answer to the last question.");
  const last = replies(page).last();
  await last.hover();
  await last.getByRole("button", { name: "Regenerate response" }).click();
  await expect(page.getByText("The second answer to the last question.")).toBeVisible({
    timeout: 30_000,
  });
  const versions = page.getByRole("group", { name: "Versions of this message" });
  await expect(versions).toContainText("2/2");
  await scrollToTop(page, () =>
    expect(userMessages(page).first()).toContainText("Question 0.", { timeout: 1_000 }),
  );

  // Regenerate asks the server first; meanwhile the reply is switched away and back (each
  // switch's answer is the newest page again, the pages above it loaded anew on the way up).
  const { promise: asked, resolve: answerAsk } = Promise.withResolvers<void>();
  await page.route("**/api/chats/*/branches**", async (route) => {
    if (new URL(route.request().url()).searchParams.has("messageId")) await asked;
    await route.continue();
  });
  await page.getByTestId("message-scroller").evaluate((el) => {
    el.scrollTop = el.scrollHeight;
  });
  await last.hover();
  await last.getByRole("button", { name: "Regenerate response" }).click();
  await versions.getByRole("button", { name: "Previous version" }).click();
  await expect(versions).toContainText("1/2");
  await versions.getByRole("button", { name: "Next version" }).click();
  await expect(versions).toContainText("2/2");
  await scriptReply(page, "The third answer to the last question.");
  answerAsk();
  await expect(page.getByText("The third answer to the last question.")).toBeVisible({
    timeout: 30_000,
  });
  await expect(versions).toContainText("3/3");
  await page.unrouteAll({ behavior: "ignoreErrors" });

  // The timeline starts once, as stored: the first two questions in order, not again.
  await scrollToTop(page, () =>
    expect(userMessages(page).first()).toContainText("Question 0.", { timeout: 1_000 }),
  );
  await expect(userMessages(page).nth(1)).toContainText("Question 1.");
  await expect(userMessages(page).nth(2)).toContainText("Question 2.");
});

test("a version switch keeps the switched message where it was on screen, and the focus on its switch", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await openFakeChat(page, "switch-in-place");
  const chatId = await seedTurns(page, 10);
  await page.goto(`/chat/${chatId}`);
  await hydrated(page);
  await expect(userMessages(page).last()).toContainText("Question 9.");

  // A second version of the first reply: only its question and it remain on screen.
  await scrollToTop(page, () => expect(replies(page).first()).toBeInViewport());
  await scriptReply(page, "Second try at zero.");
  const first = replies(page).first();
  await first.hover();
  await first.getByRole("button", { name: "Regenerate response" }).click();
  await page
    .getByRole("alertdialog", { name: "Regenerate this reply?" })
    .getByRole("button", { name: "Regenerate" })
    .click();
  await expect(replies(page).first()).toContainText("Second try at zero.", { timeout: 30_000 });
  const versions = page.getByRole("group", { name: "Versions of this message" });
  await expect(versions).toContainText("2/2");
  const topOf = async () => (await versions.boundingBox())?.y ?? Number.NaN;
  const before = await topOf();

  // Back to the first version, ten turns long: the switch stays put under the pointer, with the
  // focus on the button pressed (now at its end), and the later messages come in below it.
  await versions.getByRole("button", { name: "Previous version" }).click();
  await expect(versions).toContainText("1/2");
  await expect(userMessages(page).nth(1)).toContainText("Question 1.");
  await expect(versions.getByRole("button", { name: "Previous version" })).toBeFocused();
  await expect.poll(async () => Math.abs((await topOf()) - before)).toBeLessThan(2);

  // On by keyboard: Tab to the next arrow, Enter, and the focus and the switch stay.
  await page.keyboard.press("Tab");
  await expect(versions.getByRole("button", { name: "Next version" })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(versions).toContainText("2/2");
  await expect(replies(page).first()).toContainText("Second try at zero.");
  await expect(versions.getByRole("button", { name: "Next version" })).toBeFocused();
  await expect.poll(async () => Math.abs((await topOf()) - before)).toBeLessThan(2);
});

test("a regenerate confirmed after the chat went on in another tab is refused, and the page shows the chat as it is", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await openFakeChat(page, "went-on");
  await sendAndWait(page, "Question one: where does the Douro rise?", "First try at one.");
  await sendAndWait(page, "Question two: and where does it end?", "The answer to two.");

  // The confirmation counts the 2 messages after the first reply…
  const first = replies(page).first();
  await first.hover();
  await first.getByRole("button", { name: "Regenerate response" }).click();
  const ask = page.getByRole("alertdialog", { name: "Regenerate this reply?" });
  await expect(ask).toContainText("This removes the 2 messages after it");

  // …and while it is open, another tab sends a third question.
  const chatId = new URL(page.url()).pathname.split("/").at(-1);
  await scriptReply(page, "The answer to three.");
  const sent = await page.evaluate(async (chatId) => {
    const response = await fetch("/api/chat", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        trigger: "submit-message",
        chatId,
        modelId: "fake:fake-model",
        message: {
          id: crypto.randomUUID(),
          role: "user",
          parts: [{ type: "text", text: "Question three, from another tab." }],
        },
      }),
    });
    await response.text();
    return response.status;
  }, chatId);
  expect(sent).toBe(200);

  // Confirmed, it would move four: refused, and the page shows the chat as stored.
  await ask.getByRole("button", { name: "Regenerate" }).click();
  await expect(page.getByText(/This chat went on since this page showed it/)).toBeVisible({
    timeout: 30_000,
  });
  await expect(page.getByText("Question three, from another tab.")).toBeVisible();
  await expect(page.getByText("The answer to three.")).toBeVisible();
  await expect(replies(page).first()).toContainText("First try at one.");
  await expect(replies(page)).toHaveCount(3);
  await expect(page.getByRole("group", { name: "Versions of this message" })).toHaveCount(0);
});

test("an edit whose reply failed stands when a later send cannot reach Fold: the old version does not come back", async ({
  page,
}) => {
  await openFakeChat(page, "edit-reply-failed");
  await sendAndWait(page, "First question.", "First answer.");
  await sendAndWait(page, "Second question.", "Second answer.");

  // The edit is stored; the provider fails its reply (the first try and the AI SDK's two more).
  const scripted = await page.request.post(`http://127.0.0.1:${MAIN_FAKE_PORT}${SCRIPT_PATH}`, {
    data: [{ fault: "500" }, { fault: "500" }, { fault: "500" }],
  });
  expect(scripted.ok()).toBe(true);
  const first = userMessages(page).filter({ hasText: "First question." });
  await first.hover();
  await first.getByRole("button", { name: "Edit message" }).click();
  const editor = page.getByRole("textbox", { name: "Edit message" });
  await editor.fill("First question, edited.");
  await editor.press("Enter");
  await page
    .getByRole("alertdialog", { name: "Edit this message?" })
    .getByRole("button", { name: "Edit and send" })
    .click();
  await expect(page.getByText(/internal error/)).toBeVisible({ timeout: 30_000 });
  await expect(userMessages(page)).toHaveText(["First question, edited."]);

  // Fold cannot be reached when the next message is sent: it goes back into its box, and the
  // chat stays the edited version (the edit's box closed).
  await page.route("**/api/**", (route) => route.abort());
  const box = page.getByRole("textbox", { name: "Message", exact: true });
  await box.fill("Third question.");
  await box.press("Enter");
  await expect(box).toHaveValue("Third question.");
  await expect(page.getByRole("alert").filter({ hasText: "could not be reached" })).toBeVisible();
  await expect(userMessages(page)).toHaveText(["First question, edited."]);
  await expect(page.getByText("Second question.")).toHaveCount(0);
  await expect(editor).toHaveCount(0);
  await page.unroute("**/api/**");
});

test("an edit longer than a message may be says how long it is against the limit and cannot be sent, as the message box", async ({
  page,
}) => {
  await openFakeChat(page, "edit-too-long");
  await sendAndWait(page, "A short question.", "A short answer.");
  const asked = userMessages(page).first();
  await asked.hover();
  await asked.getByRole("button", { name: "Edit message" }).click();
  const editBox = page.getByRole("textbox", { name: "Edit message" });
  await editBox.fill("x".repeat(100_001));
  await expect(page.getByText("100,001 / 100,000 characters")).toBeVisible();
  const save = page.getByRole("button", { name: "Save & send" });
  await expect(save).toBeDisabled();
  await editBox.press("Enter");
  // Nothing was sent: the box stays open with what was typed, the chat as it was.
  await expect(editBox).toHaveValue("x".repeat(100_001));
  await editBox.fill("A shorter question.");
  await expect(page.getByText("/ 100,000 characters")).toHaveCount(0);
  await expect(save).toBeEnabled();
});
