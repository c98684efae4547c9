import { expect, type Locator, type Page, test } from "@playwright/test";
import { RECORDED_PATH, SCRIPT_PATH } from "../fixtures/fake-openai/server";
import { hydrated, openNewChat, registerUser } from "./helpers";
import { MAIN_FAKE_PORT } from "./servers";

// fake:small has a 4,096-token window (scripts/e2e-server.mjs): a few long turns fill it.
const SMALL_MODEL = "fake:small";

type Recorded = { messages: Array<{ role: string; content: unknown }> };

/** What the e2e fake provider was asked, newest last (it runs in its own process). */
async function recordedRequests(page: Page): Promise<Recorded[]> {
  const response = await page.request.get(`http://127.0.0.1:${MAIN_FAKE_PORT}${RECORDED_PATH}`);
  return ((await response.json()) as { requests: Recorded[] }).requests;
}

function textOf(message: Recorded["messages"][number]): string {
  if (typeof message.content === "string") return message.content;
  if (!Array.isArray(message.content)) return "";
  return message.content.map((p: { text?: string }) => p.text ?? "").join("");
}

/** Sends a message and waits for its finished reply (each reply gets a stats button). */
async function sendAndWait(page: Page, text: string) {
  const stats = page.getByRole("button", { name: "Message stats" });
  const replies = await stats.count();
  const box = page.getByRole("textbox", { name: "Message" });
  await expect(box).toBeEnabled();
  await box.fill(text);
  await box.press("Enter");
  await expect(stats).toHaveCount(replies + 1, { timeout: 30_000 });
}

const userMessages = (page: Page) => page.locator("[data-role=user]");

/** Compact now from the ring (a large drop asks first), and wait for its trace to finish. */
async function compactFromRing(page: Page) {
  await page.getByTestId("context-ring").click();
  const confirm = page.getByRole("alertdialog", { name: "Compact this chat now?" });
  const done = page.locator("[data-testid=compaction-trace][data-state=done]");
  await expect(confirm.or(done).first()).toBeVisible();
  if (await confirm.isVisible())
    await confirm.getByRole("button", { name: "Compact", exact: true }).click();
  await expect(done).toHaveCount(1, { timeout: 30_000 });
}

/** A first message asked and then edited: two versions of it, the edited one shown and answered. */
async function twoVersionsOfFirstMessage(page: Page) {
  await sendAndWait(page, "First question: which trains go to Porto?");
  const first = userMessages(page).first();
  await first.hover();
  await first.getByRole("button", { name: "Edit message" }).click();
  await page.getByRole("textbox", { name: "Edit message" }).fill("First question, edited.");
  await page.getByRole("button", { name: "Save & send" }).click();
  await page
    .getByRole("alertdialog", { name: "Edit this message?" })
    .getByRole("button", { name: "Edit and send" })
    .click();
  const versions = page.getByRole("group", { name: "Versions of this message" });
  await expect(versions).toContainText("2/2");
  await expect(page.getByRole("button", { name: "Message stats" })).toHaveCount(1, {
    timeout: 30_000,
  });
  return versions;
}

test("an edit that drops later messages asks first, and the old version stays a switch away", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await openNewChat(page, `e2e-branches-${Date.now()}@example.com`);
  await sendAndWait(page, "First question: which trains go to Porto?");
  await sendAndWait(page, "Second question: and the buses?");
  await expect(userMessages(page)).toHaveCount(2);

  const first = userMessages(page).first();
  await first.hover();
  await first.getByRole("button", { name: "Edit message" }).click();
  // The box takes the focus: typing goes there, Escape closes it.
  await expect(page.getByRole("textbox", { name: "Edit message" })).toBeFocused();
  await page
    .getByRole("textbox", { name: "Edit message" })
    .fill("First question, edited: flights?");
  await page.getByRole("button", { name: "Save & send" }).click();

  // It asks, with the real count: the first reply, the second question and its reply.
  const ask = page.getByRole("alertdialog", { name: "Edit this message?" });
  await expect(ask).toContainText("This removes the 3 messages after it");
  await page.screenshot({ path: "test-results/memory-edit-asks.png" });
  // Cancelled, the edit is still there as typed.
  await ask.getByRole("button", { name: "Cancel" }).click();
  await expect(ask).toHaveCount(0);
  await expect(page.getByRole("textbox", { name: "Edit message" })).toHaveValue(
    "First question, edited: flights?",
  );
  // The focus is back where it asked from, not on the page.
  await expect(page.getByRole("button", { name: "Save & send" })).toBeFocused();
  await page.getByRole("button", { name: "Save & send" }).click();
  await ask.getByRole("button", { name: "Edit and send" }).click();
  await expect(page.getByRole("textbox", { name: "Edit message" })).toHaveCount(0);
  // Sent: the edit box went, and the focus with it to the message box.
  await expect(page.getByRole("textbox", { name: "Message" })).toBeFocused();
  await expect(page.getByRole("button", { name: "Message stats" })).toHaveCount(1, {
    timeout: 30_000,
  });
  await expect(userMessages(page)).toHaveCount(1);
  await expect(userMessages(page).getByText("Second question: and the buses?")).toHaveCount(0);

  const versions = page.getByRole("group", { name: "Versions of this message" });
  await expect(versions).toContainText("2/2");

  // Back: the first version with everything after it.
  await versions.getByRole("button", { name: "Previous version" }).click();
  await expect(versions).toContainText("1/2");
  await expect(userMessages(page).getByText("Second question: and the buses?")).toBeVisible();
  await expect(
    userMessages(page).getByText("First question: which trains go to Porto?"),
  ).toBeVisible();
  await expect(userMessages(page)).toHaveCount(2);
  await page.screenshot({ path: "test-results/memory-branch-1.png" });

  // Forth: the edited version again.
  await versions.getByRole("button", { name: "Next version" }).click();
  await expect(versions).toContainText("2/2");
  await expect(userMessages(page).getByText("First question, edited: flights?")).toBeVisible();
  await expect(userMessages(page).getByText("Second question: and the buses?")).toHaveCount(0);

  // The version shown is stored: a reload shows the same.
  await page.reload();
  await hydrated(page);
  await expect(versions).toContainText("2/2");
  await expect(userMessages(page)).toHaveCount(1);
});

test("Send waits for a version switch on its way, so the message goes to the version it shows", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await openNewChat(page, `e2e-switch-send-${Date.now()}@example.com`);
  const versions = await twoVersionsOfFirstMessage(page);

  // The switch takes a moment to reach the server; a message is typed meanwhile.
  const { promise: released, resolve: release } = Promise.withResolvers<void>();
  await page.route("**/api/chats/*/branches", async (route) => {
    if (route.request().method() === "POST") await released;
    await route.continue();
  });
  const box = page.getByRole("textbox", { name: "Message" });
  const composer = page.locator("form").filter({ has: box });
  const composerTop = (await composer.boundingBox())?.y;
  await versions.getByRole("button", { name: "Previous version" }).click();
  const sendButton = page.getByRole("button", { name: "Send message" });
  // Meanwhile the box takes text, but Send waits: the message would go to the version left.
  await box.fill("Third question: and the ferries?");
  await box.press("Enter");
  await expect(sendButton).toBeDisabled();
  await expect(box).toHaveValue("Third question: and the ferries?");
  const waiting = page.getByRole("status").filter({ hasText: "You can send once it is done" });
  await expect(waiting).toBeVisible();
  // It floats above the message box, which keeps its place and size.
  expect((await composer.boundingBox())?.y).toBe(composerTop);
  await page.screenshot({ path: "test-results/memory-send-waits.png" });
  release();
  await expect(versions).toContainText("1/2");
  await expect(sendButton).toBeEnabled();
  await expect(waiting).toHaveCount(0);
  await box.press("Enter");
  await expect(userMessages(page).getByText("Third question: and the ferries?")).toBeVisible();
  await expect(page.getByRole("button", { name: "Message stats" })).toHaveCount(2, {
    timeout: 30_000,
  });
  await page.unroute("**/api/chats/*/branches");

  // Stored so: the first version, then the message sent.
  await page.reload();
  await hydrated(page);
  await expect(versions).toContainText("1/2");
  await expect(
    userMessages(page).getByText("First question: which trains go to Porto?"),
  ).toBeVisible();
  await expect(userMessages(page).getByText("Third question: and the ferries?")).toBeVisible();
});

test("a regenerate that comes due while a version switch is on its way says so instead of vanishing", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await openNewChat(page, `e2e-switch-regenerate-${Date.now()}@example.com`);
  const versions = await twoVersionsOfFirstMessage(page);

  // The question Regenerate asks first (how much it moves), and then the switch, both held.
  const { promise: asked, resolve: answerAsk } = Promise.withResolvers<void>();
  const { promise: switched, resolve: answerSwitch } = Promise.withResolvers<void>();
  await page.route("**/api/chats/*/branches**", async (route) => {
    await (route.request().method() === "POST" ? switched : asked);
    await route.continue();
  });
  const reply = page.locator("[data-role=assistant]").last();
  await reply.hover();
  await reply.getByRole("button", { name: "Regenerate response" }).click();
  await versions.getByRole("button", { name: "Previous version" }).click();
  answerAsk();
  await expect(
    page.getByRole("alert").filter({ hasText: "Another version is being shown" }),
  ).toBeVisible();
  answerSwitch();
  await expect(versions).toContainText("1/2");
  // Still said once the switch has landed: the user reads why nothing was regenerated.
  await expect(
    page.getByRole("alert").filter({ hasText: "Another version is being shown" }),
  ).toBeVisible();
  await expect(page.getByRole("button", { name: "Message stats" })).toHaveCount(1);
  await page.unrouteAll({ behavior: "ignoreErrors" });
});

test("a regenerate that comes due after a version switch landed says its message went with the version left", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await openNewChat(page, `e2e-switched-regenerate-${Date.now()}@example.com`);
  const versions = await twoVersionsOfFirstMessage(page);
  const pageErrors: string[] = [];
  page.on("pageerror", (error) => pageErrors.push(error.message));

  // Regenerate asks the server first; the switch clicked meanwhile is answered before it.
  const { promise: asked, resolve: answerAsk } = Promise.withResolvers<void>();
  await page.route("**/api/chats/*/branches**", async (route) => {
    if (new URL(route.request().url()).searchParams.has("messageId")) await asked;
    await route.continue();
  });
  const reply = page.locator("[data-role=assistant]").last();
  await reply.hover();
  await reply.getByRole("button", { name: "Regenerate response" }).click();
  await versions.getByRole("button", { name: "Previous version" }).click();
  await expect(versions).toContainText("1/2");
  answerAsk();
  await expect(
    page.getByRole("alert").filter({ hasText: "That message is not in the version shown now." }),
  ).toBeVisible();
  await page.unrouteAll({ behavior: "ignoreErrors" });
  expect(pageErrors).toEqual([]);

  // Nothing was sent: the version shown is stored as it was, one question and its reply.
  await page.reload();
  await hydrated(page);
  await expect(versions).toContainText("1/2");
  await expect(page.getByRole("button", { name: "Message stats" })).toHaveCount(1);
  await expect(
    userMessages(page).getByText("First question: which trains go to Porto?"),
  ).toBeVisible();
});

test("an edit the server refuses opens its box again, holding the edit, and says why", async ({
  page,
}) => {
  await openNewChat(page, `e2e-refused-edit-${Date.now()}@example.com`);
  await sendAndWait(page, "Which trains go to Porto?");
  // The server cannot take the edit (its database is restarting).
  await page.route("**/api/chat", (route) =>
    route.request().method() === "POST"
      ? route.fulfill({
          status: 503,
          contentType: "application/json",
          body: JSON.stringify({
            error: { code: "unavailable:database", message: "The database is unavailable." },
          }),
        })
      : route.continue(),
  );
  const first = userMessages(page).first();
  await first.hover();
  await first.getByRole("button", { name: "Edit message" }).click();
  const editBox = page.getByRole("textbox", { name: "Edit message" });
  await editBox.fill("Which trains go to Lisbon, and when?");
  await page.getByRole("button", { name: "Save & send" }).click();
  const ask = page.getByRole("alertdialog", { name: "Edit this message?" });
  await ask.getByRole("button", { name: "Edit and send" }).click();

  // Refused: the box is back with what was typed, and the chat shows what is stored.
  await expect(editBox).toHaveValue("Which trains go to Lisbon, and when?");
  await expect(page.getByText("The database is unavailable.").first()).toBeVisible();
  await expect(page.getByRole("button", { name: "Message stats" })).toHaveCount(1);

  // Once the server takes it, the same box sends it.
  await page.unroute("**/api/chat");
  await page.getByRole("button", { name: "Save & send" }).click();
  await ask.getByRole("button", { name: "Edit and send" }).click();
  await expect(editBox).toHaveCount(0);
  await expect(userMessages(page).getByText("Which trains go to Lisbon, and when?")).toBeVisible();
  await expect(page.getByRole("button", { name: "Message stats" })).toHaveCount(1, {
    timeout: 30_000,
  });
});

test("a memory that cannot be read says so, with Retry, instead of showing an empty one", async ({
  page,
}) => {
  await registerUser(page, `e2e-memory-unread-${Date.now()}@example.com`);
  const memoryUrl = "**/api/chats/*/memory";
  await page.route(memoryUrl, (route) =>
    route.request().method() === "GET"
      ? route.fulfill({
          status: 500,
          contentType: "application/json",
          body: JSON.stringify({ error: { code: "internal", message: "Something broke." } }),
        })
      : route.fallback(),
  );
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveURL(/\/chat\/[0-9a-f-]{36}$/, { timeout: 20_000 });
  await hydrated(page);

  await page.getByRole("button", { name: "Memory" }).click();
  const panel = page.getByRole("dialog", { name: "What the model remembers" });
  const problem = panel.getByRole("alert");
  await expect(problem).toContainText("could not be read");
  await expect(problem).toContainText("Something broke.");
  await expect(panel).not.toContainText("Nothing is summarized yet");

  // Read again once the server answers: the chat's memory, empty so far.
  await page.unroute(memoryUrl);
  await problem.getByRole("button", { name: "Retry" }).click();
  await expect(panel).toContainText("Nothing is summarized yet");
  await expect(panel.getByRole("alert")).toHaveCount(0);
});

test("the memory panel shows the summary; an edited summary is what the next request carries", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await openNewChat(page, `e2e-memory-${Date.now()}@example.com`);
  const picker = page.getByLabel("Model");
  await expect(picker).toBeEnabled();
  await picker.selectOption(SMALL_MODEL);

  const filler = "budget harbour lantern meadow copper river signal orchard granite window ".repeat(
    20,
  );
  const request = (turn: number) => `Request ${turn}: keep item ${turn} in the plan. ${filler}`;
  for (let turn = 1; turn <= 4; turn++) await sendAndWait(page, request(turn));
  // Pin the second request: it must never be folded.
  const pinned = userMessages(page).nth(1);
  await pinned.hover();
  await pinned.locator("xpath=..").getByRole("button", { name: "Pin message" }).click();
  await expect(page.getByText("Pinned", { exact: true })).toHaveCount(1);
  await compactFromRing(page);
  // The first messages are folded: marked in the timeline.
  await expect(page.getByText("In summary").first()).toBeVisible();

  await page.getByRole("button", { name: "Memory" }).click();
  const panel = page.getByRole("dialog", { name: "What the model remembers" });
  await expect(panel.getByTestId("memory-summary")).toContainText("Goal & open requests");
  // Rendered as Markdown: a heading, not "## " text.
  await expect(panel.getByTestId("memory-summary").getByRole("heading").first()).toBeVisible();
  // Its headings are no larger than the panel's own title.
  const fontSize = (locator: Locator) =>
    locator.evaluate((el) => Number.parseFloat(getComputedStyle(el).fontSize));
  const titleSize = await fontSize(
    panel.getByRole("heading", { name: "What the model remembers" }),
  );
  for (const heading of await panel.getByTestId("memory-summary").getByRole("heading").all()) {
    expect(await fontSize(heading)).toBeLessThanOrEqual(titleSize);
  }
  await page.screenshot({ path: "test-results/memory-panel.png" });

  await panel.getByRole("button", { name: "Edit summary" }).click();
  // Another tab saves its own text meanwhile: this edit must not overwrite it unseen.
  const chatPath = new URL(page.url()).pathname.replace("/chat/", "/api/chats/");
  const current = (await (await page.request.get(`${chatPath}/memory`)).json()) as {
    memory: { version: number };
  };
  const other = await page.request.put(`${chatPath}/memory`, {
    headers: { origin: new URL(page.url()).origin },
    data: {
      summary: "## Goal & open requests\n- Other tab (OTHER-TAB-7).",
      version: current.memory.version,
    },
  });
  expect(other.status()).toBe(200);
  const mine = "## Goal & open requests\n- Plan the Lisbon trip in May (marker LISBON-MARKER-42).";
  await panel.getByRole("textbox", { name: "Edit summary" }).fill(mine);
  await panel.getByRole("button", { name: "Save summary" }).click();
  await expect(panel.getByRole("alert")).toContainText("The summary changed while you edited it");
  // Cancel shows the summary as it is now; an edit of that one saves.
  await panel.getByRole("button", { name: "Cancel" }).click();
  await expect(panel.getByTestId("memory-summary")).toContainText("OTHER-TAB-7");
  // The editor went with the focus in it: it is back on Edit summary, not on the panel.
  await expect(panel.getByRole("button", { name: "Edit summary" })).toBeFocused();
  await panel.getByRole("button", { name: "Edit summary" }).click();
  await expect(panel.getByRole("textbox", { name: "Edit summary" })).toBeFocused();
  await panel.getByRole("textbox", { name: "Edit summary" }).fill(mine);
  // Escape closes the panel; the edit is still there when it opens again.
  await page.keyboard.press("Escape");
  await expect(panel).toHaveCount(0);
  await page.getByRole("button", { name: "Memory" }).click();
  await expect(panel.getByRole("textbox", { name: "Edit summary" })).toHaveValue(mine);
  await panel.getByRole("button", { name: "Save summary" }).click();
  await expect(panel.getByTestId("memory-summary")).toContainText("LISBON-MARKER-42");
  await expect(panel.getByRole("button", { name: "Edit summary" })).toBeFocused();
  await panel.getByRole("button", { name: "Close" }).click();
  await expect(page.getByText("Summary edited by you").last()).toBeVisible();

  await sendAndWait(page, "What is the plan, in one line?");
  const requests = await recordedRequests(page);
  const turn = requests.findLast((r) =>
    r.messages.some((m) => textOf(m).includes("What is the plan, in one line?")),
  );
  expect(turn, "the fake provider never got the turn").toBeDefined();
  const sent = (turn?.messages ?? []).map(textOf).join("\n");
  expect(sent).toContain(`<conversation-summary>\n${mine}\n</conversation-summary>`);
  // The pinned request went out as written, though the summary covers it.
  expect((turn?.messages ?? []).filter((m) => textOf(m) === request(2).trim())).toHaveLength(1);
  expect((turn?.messages ?? []).some((m) => textOf(m) === request(1).trim())).toBe(false);

  // Continue in a new chat: it starts from this summary.
  const source = page.url();
  await page.getByRole("button", { name: "Memory" }).click();
  await panel.getByRole("button", { name: "Continue in a new chat" }).click();
  await expect(page).not.toHaveURL(source);
  await expect(page.getByText("This chat continues an earlier one")).toBeVisible();
  // The pinned request came along, still pinned.
  await expect(userMessages(page).filter({ hasText: "Request 2:" })).toHaveCount(1);
  await expect(page.getByText("Pinned", { exact: true })).toHaveCount(1);
  await page.getByRole("button", { name: "Memory" }).click();
  await expect(panel.getByTestId("memory-summary")).toContainText("LISBON-MARKER-42");
  // The panel lists the pinned request by how it begins; unpinned there, the request that came
  // along is an ordinary message again.
  await expect(panel.getByText("1 pinned message, always sent as written.")).toBeVisible();
  const pins = panel.getByTestId("memory-pins").getByRole("listitem");
  await expect(pins).toHaveCount(1);
  await expect(pins.first()).toContainText("You: Request 2:");
  await pins
    .first()
    .getByRole("button", { name: /^Unpin your message: Request 2:/ })
    .click();
  await expect(panel.getByText("No pinned messages.", { exact: false })).toBeVisible();
  // Its button went with its row: focus stays in the panel, on the line that counts the pins.
  await expect(panel.getByText("No pinned messages.", { exact: false })).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(page.getByText("Pinned", { exact: true })).toHaveCount(0);
});

test("notes past what the chat's model keeps word for word are refused with the reason, and the notes kept stay", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await openNewChat(page, `e2e-notes-full-${Date.now()}@example.com`);
  await sendAndWait(page, "Plan a week in Lisbon.");
  await page.getByRole("button", { name: "Memory" }).click();
  const panel = page.getByRole("dialog", { name: "What the model remembers" });
  const notes = panel.getByRole("region", { name: "Notes the model keeps" });
  const box = notes.getByRole("textbox", { name: "New note" });
  const list = notes.getByTestId("memory-notes").getByRole("listitem");
  const room = notes.getByTestId("notes-room");
  const roomTokens = async () => {
    const [used = 0, capacity = 0] =
      ((await room.textContent()) ?? "")
        .match(/[\d,]+/g)
        ?.map((n) => Number(n.replaceAll(",", ""))) ?? [];
    return { used, capacity };
  };
  // Long notes (a few hundred characters each) until one no longer fits.
  const alert = notes.getByRole("alert");
  let added = 0;
  for (let i = 0; i < 40 && !(await alert.isVisible()); i++) {
    await box.fill(
      `Note ${i}: ${"the venue must have step-free access and a quiet room; ".repeat(8)}`,
    );
    await box.press("Enter");
    await expect(list.or(alert).first()).toBeVisible();
    await expect(box).toBeEnabled();
    if ((await list.count()) > added) added += 1;
  }
  await expect(alert).toContainText("Shorten it or take a note away first.");
  expect(added).toBeGreaterThan(0);
  await expect(list).toHaveCount(added);
  // What was typed stays in the box; the room line still says the notes fit.
  await expect(box).not.toHaveValue("");
  const { used, capacity } = await roomTokens();
  expect(used).toBeGreaterThan(0);
  expect(used).toBeLessThanOrEqual(capacity);
  await page.screenshot({ path: "test-results/memory-notes-full.png" });
});

test("a note added in the memory panel is sent with the next request and can be taken away again", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await openNewChat(page, `e2e-notes-${Date.now()}@example.com`);
  await sendAndWait(page, "Plan a weekend in Porto for two.");

  await page.getByRole("button", { name: "Memory" }).click();
  const panel = page.getByRole("dialog", { name: "What the model remembers" });
  const notes = panel.getByRole("region", { name: "Notes the model keeps" });
  const box = notes.getByRole("textbox", { name: "New note" });
  await expect(notes.getByRole("button", { name: "Add" })).toBeDisabled();
  // How much the model keeps word for word is said before the first note and after it.
  await expect(notes.getByTestId("notes-room")).toHaveText(
    /^Room for about [\d,]+ tokens with this chat's model\.$/,
  );
  // The room is the chat's model's: another model picked, the panel says that one's at once.
  const room = async () =>
    Number(
      ((await notes.getByTestId("notes-room").textContent()) ?? "")
        .match(/[\d,]+/)?.[0]
        .replaceAll(",", ""),
    );
  const roomOfFirstModel = await room();
  const picker = page.getByLabel("Model", { exact: true });
  const firstModel = await picker.inputValue();
  await page.keyboard.press("Escape");
  await picker.selectOption(SMALL_MODEL);
  await page.getByRole("button", { name: "Memory" }).click();
  await expect.poll(room).toBeLessThan(roomOfFirstModel);
  await page.keyboard.press("Escape");
  await picker.selectOption(firstModel);
  await page.getByRole("button", { name: "Memory" }).click();
  await expect.poll(room).toBe(roomOfFirstModel);
  const note = "Never book flights through Frankfurt.";
  await box.fill(note);
  await box.press("Enter");
  await expect(notes.getByTestId("memory-notes")).toContainText(note);
  await expect(notes.getByTestId("notes-room")).toHaveText(
    /^\d+ tokens of about [\d,]+ tokens used with this chat's model\.$/,
  );
  await expect(box).toHaveValue("");
  await expect(box).toBeFocused();
  // The same note twice is refused with its reason, and the list keeps one.
  await box.fill(note);
  await box.press("Enter");
  await expect(notes.getByRole("alert")).toContainText("already keeps this note");
  await expect(notes.getByTestId("memory-notes").getByRole("listitem")).toHaveCount(1);
  // Notes alone summarize nothing: no new chat to continue in, but the summary can be edited.
  await expect(panel.getByRole("button", { name: "Continue in a new chat" })).toBeDisabled();
  await expect(panel.getByRole("button", { name: "Edit summary" })).toBeEnabled();
  await page.screenshot({ path: "test-results/memory-notes.png" });
  await page.keyboard.press("Escape");
  // The timeline says what changed; a summary of notes alone is no continued chat.
  await expect(page.getByText("Note added by you")).toBeVisible();
  await expect(page.getByText("This chat continues an earlier one")).toHaveCount(0);

  await sendAndWait(page, "Which trains then?");
  const sent = (await recordedRequests(page)).at(-1);
  expect(sent?.messages.map(textOf).join("\n")).toContain(`- ${note}`);

  // Still there after a reload; taken away, focus goes back to the box.
  await page.reload();
  await hydrated(page);
  await page.getByRole("button", { name: "Memory" }).click();
  await notes.getByRole("button", { name: `Remove note: ${note}` }).click();
  await expect(notes.getByTestId("memory-notes")).toHaveCount(0);
  await expect(box).toBeFocused();
  await page.keyboard.press("Escape");
  await sendAndWait(page, "And the buses?");
  const after = (await recordedRequests(page)).at(-1);
  expect(after?.messages.map(textOf).join("\n")).not.toContain(note);

  // A note typed as a list item of its own is taken away by its × too.
  await page.getByRole("button", { name: "Memory" }).click();
  await box.fill("- - the port is 8443");
  await box.press("Enter");
  await expect(notes.getByTestId("memory-notes")).toContainText("the port is 8443");
  await notes.getByRole("button", { name: "Remove note: - the port is 8443" }).click();
  await expect(notes.getByTestId("memory-notes")).toHaveCount(0);
  await expect(notes.getByRole("alert")).toHaveCount(0);
});

test("the model recalls a value the summary condensed, quoting the message it came from", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await openNewChat(page, `e2e-recall-${Date.now()}@example.com`);
  const picker = page.getByLabel("Model");
  await expect(picker).toBeEnabled();
  await picker.selectOption("demo:demo");

  const key = "dk-7f3a9c2e41d8b05";
  const filler = "budget harbour lantern meadow copper river signal orchard granite window ".repeat(
    25,
  );
  // Long messages: the list shows only those near the bottom, so each turn waits for its own reply.
  const send = async (text: string, reply: string) => {
    const box = page.getByRole("textbox", { name: "Message" });
    await expect(box).toBeEnabled();
    await box.fill(text);
    await box.press("Enter");
    await expect(page.getByText(reply).last()).toBeVisible({ timeout: 30_000 });
    await expect(page.getByRole("button", { name: "Stop" })).toHaveCount(0);
  };
  await send(`The staging deploy key is ${key}; keep it safe. ${filler}`, "This is the first turn");
  for (let turn = 2; turn <= 5; turn++) {
    await send(`Request ${turn}: plan item ${turn}. ${filler}`, `This is turn ${turn} of`);
  }
  await compactFromRing(page);
  // recall reaches only what the summary covers: the answer quoting message 1 shows it folded.
  await send("What did I say about the staging deploy key?", "From message 1 (user):");
  const reply = page.locator("[data-role=assistant]").last();
  await expect(reply).toContainText(key);
  // The call is shown like any tool's.
  await expect(reply.getByText("recall", { exact: true })).toBeVisible();
  await page.screenshot({ path: "test-results/recall.png" });
});

test("a long pinned message: the ring says summarizing comes later than usual, and why", async ({
  page,
}) => {
  test.setTimeout(90_000);
  await openNewChat(page, `e2e-late-fold-${Date.now()}@example.com`);
  const picker = page.getByLabel("Model");
  await expect(picker).toBeEnabled();
  await picker.selectOption(SMALL_MODEL);
  // About 800 tokens: with Fold's instructions and a full summary, over what a fold aims for
  // at 4,096, so while it is pinned no fold can get the chat there.
  const words = "budget harbour lantern meadow copper river signal orchard granite window ";
  await sendAndWait(page, `The plan to keep in mind: ${words.repeat(80)}`);
  for (const text of ["Thanks. What comes first?", "And then?", "Good."])
    await sendAndWait(page, text);

  const ring = page.getByTestId("context-ring");
  const next = page.getByTestId("context-next");
  await ring.hover();
  await expect(next).toContainText("Older messages get summarized when this chat reaches");
  await expect(next).not.toContainText("later than usual");
  await page.mouse.move(0, 0);
  await expect(next).toHaveCount(0);

  const plan = userMessages(page).first();
  await plan.hover();
  await plan.locator("xpath=..").getByRole("button", { name: "Pin message" }).click();
  await expect(page.getByText("Pinned", { exact: true })).toHaveCount(1);
  await ring.hover();
  await expect(next).toContainText("later than usual: pinned messages and the latest message");
});

test("a message left unanswered keeps its failure or No reply, with Retry, just under it when a note comes after it", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await openNewChat(page, `e2e-unanswered-note-${Date.now()}@example.com`);
  // The provider fails every try of the AI SDK: the message is stored, unanswered.
  const scripted = await page.request.post(`http://127.0.0.1:${MAIN_FAKE_PORT}${SCRIPT_PATH}`, {
    data: [{ fault: "500" }, { fault: "500" }, { fault: "500" }],
  });
  expect(scripted.ok()).toBe(true);
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("Where do the ferries leave from?");
  await box.press("Enter");
  const failure = page.getByTestId("message-scroller").getByRole("alert");
  await expect(failure).toBeVisible({ timeout: 30_000 });

  // A note added while the failure still shows: the failure and its Retry stay with the message.
  await page.getByRole("button", { name: "Memory" }).click();
  const panel = page.getByRole("dialog", { name: "What the model remembers" });
  const notes = panel.getByRole("region", { name: "Notes the model keeps" });
  await notes.getByRole("textbox", { name: "New note" }).fill("The pier is Cais do Sodré.");
  await notes.getByRole("textbox", { name: "New note" }).press("Enter");
  await expect(notes.getByTestId("memory-notes")).toContainText("Cais do Sodré");
  await page.keyboard.press("Escape");
  const note = page.getByText("Note added by you");
  await expect(note).toBeVisible();
  const asked = userMessages(page).last();
  // In reading order: the message, what became of it, then the note.
  expect(await follows(asked, failure)).toBe(true);
  expect(await follows(failure, note)).toBe(true);

  // After a reload the failure reads as No reply, in the same place.
  await page.reload();
  await hydrated(page);
  const noReply = page.getByText("No reply.");
  await expect(noReply).toBeVisible();
  await expect(note).toBeVisible();
  expect(await follows(asked, noReply)).toBe(true);
  expect(await follows(noReply, note)).toBe(true);

  // Its Retry answers it.
  await page.getByRole("button", { name: "Retry" }).click();
  const reply = page.locator("[data-role=assistant]").last();
  await expect(reply).toContainText("Fake reply to: Where do the ferries", { timeout: 30_000 });
  await expect(noReply).toHaveCount(0);
});

/** Whether `later` comes after `earlier` in the page's reading order. */
async function follows(earlier: Locator, later: Locator): Promise<boolean> {
  const other = await later.elementHandle();
  return earlier.evaluate(
    (element, node) =>
      Boolean(element.compareDocumentPosition(node as Node) & Node.DOCUMENT_POSITION_FOLLOWING),
    other,
  );
}
