import { type BrowserContext, expect, type Page, test } from "@playwright/test";
import { type FakeOpenAI, startFakeOpenAI } from "../fixtures/fake-openai/server";
import { cookieHeader } from "../helpers/account";
import {
  type Client,
  createChat,
  type Instance,
  sendMessage,
  startInstance,
  withCookie,
} from "../helpers/instances";
import { createPostgresDatabase } from "../helpers/postgres";
import { readUntilText } from "../helpers/ui-stream";
import { hydrated, registerUser } from "./helpers";
import { INSTANCE_A_PORT, INSTANCE_B_PORT } from "./servers";

/**
 * Turns across instances (issue 11): two `next start` processes on one Postgres and one
 * Redis, a provider that streams slowly. A reload on B follows a reply streaming on A; Stop
 * stops the model wherever the turn runs; an instance killed mid-turn frees the chat within
 * the 30 s lease and the orphaned message offers Retry.
 */

const MODEL = "fake:fake-model";
const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

test.describe.configure({ mode: "serial" });

let fake: FakeOpenAI;
let a: Instance;
let b: Instance;
let dropDatabase: () => Promise<void>;

test.beforeAll(async () => {
  test.setTimeout(240_000);
  // About 16 s per reply: time to reload, stop or crash in the middle of one.
  fake = await startFakeOpenAI({
    models: [{ id: "fake-model", maxModelLen: 16_384 }],
    chunkDelayMs: 40,
    chunkChars: 6,
    replyTokens: 600,
  });
  const database = await createPostgresDatabase();
  dropDatabase = database.drop;
  const options = { databaseUrl: database.url, redisUrl: REDIS_URL, providerUrl: fake.url };
  // One after the other: the first applies the migrations.
  a = await startInstance({ ...options, port: INSTANCE_A_PORT });
  b = await startInstance({ ...options, port: INSTANCE_B_PORT });
  // A cold instance compiles each route on first use: warm both so timings are a warm server's.
  for (const base of [a.url, b.url]) {
    for (const pathname of ["/login", "/register", "/api/models"])
      await fetch(`${base}${pathname}`);
  }
});

test.afterAll(async () => {
  await Promise.all([a?.kill(), b?.kill()]);
  await fake?.close();
  await dropDatabase?.();
});

/** A user registered in the browser on A; the API client shares its session (cookies ignore the port). */
async function signedIn(page: Page, context: BrowserContext, email: string): Promise<Client> {
  await registerUser(page, email, a.url);
  return withCookie(cookieHeader(await context.cookies(a.url)));
}

async function openChat(page: Page, base: string, chatId: string) {
  await page.goto(`${base}/chat/${chatId}`);
  // Generous: two extra servers and a streaming provider share the machine with the browser.
  await expect(page.locator("html[data-hydrated='true']")).toBeAttached({ timeout: 20_000 });
}

const assistantText = (page: Page) =>
  page.locator("[data-role='assistant']", { hasText: "Fake reply" }).last();

test("Stop in the browser stops the model; the reply stays, marked Stopped, with Continue and Retry", async ({
  page,
  context,
}) => {
  const client = await signedIn(page, context, "stop-ui@example.com");
  const chatId = await createChat(client, a.url);
  await openChat(page, a.url, chatId);
  fake.reset();
  await page.getByRole("textbox", { name: "Message" }).fill("Tell me a long story.");
  const turnSent = page.waitForRequest(
    (request) => request.url().endsWith("/api/chat") && request.method() === "POST",
  );
  await page.keyboard.press("Enter");
  await expect(assistantText(page)).toContainText(/\w{3,}/);
  const stopSent = page.waitForRequest((request) => request.url().endsWith("/stop"));
  await page.getByRole("button", { name: "Stop" }).click();
  // The stop names the message the streaming reply answers (a turn whose reply shows may not
  // listen for Stop yet, and a named stop waits for it) and the page's request for it (a stop
  // that came too late cannot stop a Retry).
  const answered = (await (await client.fetch(a.url, `/api/chats/${chatId}`)).json()) as {
    messages: Array<{ id: string; role: string }>;
  };
  const { attemptId } = (await turnSent).postDataJSON() as { attemptId?: string };
  expect(attemptId).toMatch(/^[A-Za-z0-9_-]+$/);
  expect((await stopSent).postDataJSON()).toEqual({
    messageId: answered.messages.findLast((m) => m.role === "user")?.id,
    attemptId,
  });

  const stopped = page.getByTestId("stopped");
  await expect(stopped).toContainText("Stopped");
  await expect(stopped.getByRole("button", { name: "Continue" })).toBeVisible();
  await expect(stopped.getByRole("button", { name: "Retry" })).toBeVisible();
  // Retry is the reply's Regenerate: it is not offered twice.
  const reply = page.locator("[data-role='assistant']").last();
  await expect(reply.getByRole("button", { name: "Copy message" })).toHaveCount(1);
  await expect(reply.getByRole("button", { name: "Regenerate response" })).toHaveCount(0);
  await expect
    .poll(() => fake.requests.filter((request) => request.stream).at(-1)?.abortedAt ?? null)
    .not.toBeNull();

  // Stored as it was cut: a reload shows the same partial reply, still Stopped.
  const partial = (await assistantText(page).textContent()) ?? "";
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId("stopped")).toBeVisible();
  expect(((await assistantText(page).textContent()) ?? "").length).toBeLessThanOrEqual(
    partial.length + 20,
  );

  // A note added now puts its entry after the reply: the reply keeps Continue and Retry.
  await page.getByRole("button", { name: "Memory" }).click();
  const panel = page.getByRole("dialog", { name: "What the model remembers" });
  const noteBox = panel.getByRole("textbox", { name: "New note" });
  await noteBox.fill("Keep the story short.");
  await noteBox.press("Enter");
  await expect(panel.getByTestId("memory-notes")).toContainText("Keep the story short.");
  await page.keyboard.press("Escape");
  await expect(panel).toHaveCount(0);
  await expect(page.getByTestId("stopped").getByRole("button", { name: "Continue" })).toBeVisible();
  await expect(page.getByTestId("stopped").getByRole("button", { name: "Retry" })).toBeVisible();

  // Continue asks the model to go on; the new reply is not stopped. Stop once the model
  // writes it, so the reply has something to keep.
  const continued = page.waitForRequest(
    (request) => request.url().endsWith("/api/chat") && request.method() === "POST",
  );
  await page.getByRole("button", { name: "Continue" }).click();
  await expect(page.locator("[data-role='assistant']", { hasText: "Fake reply" })).toHaveCount(2);
  const secondStop = page.waitForRequest((request) => request.url().endsWith("/stop"));
  await page.getByRole("button", { name: "Stop" }).click();
  await expect(page.getByTestId("stopped")).toHaveCount(2);
  // The first stopped reply is no longer the last: its notice has no Retry, its row Regenerate.
  const earlier = page.locator("[data-role='assistant']", { has: page.getByTestId("stopped") });
  await expect(earlier.first().getByRole("button", { name: "Retry" })).toHaveCount(0);
  await expect(earlier.first().getByRole("button", { name: "Regenerate response" })).toHaveCount(1);
  // Each request is an attempt of its own: this Stop names the Continue's, not the first one's.
  const next = (await continued).postDataJSON() as { attemptId?: string };
  expect(next.attemptId).not.toBe(attemptId);
  expect((await secondStop).postDataJSON()).toMatchObject({ attemptId: next.attemptId });
});

test("a message refused because a reply is streaming elsewhere goes back to the box; the page follows that reply, with no Retry to answer an older one", async ({
  page,
  context,
}) => {
  const client = await signedIn(page, context, "refused-ui@example.com");
  const chatId = await createChat(client, a.url);
  await openChat(page, a.url, chatId);
  // Another tab's reply starts after this page loaded: the page does not know of it.
  const elsewhere = await sendMessage(client, b.url, {
    chatId,
    modelId: MODEL,
    text: "Tell me a long story.",
  });
  expect(elsewhere.status).toBe(200);
  await readUntilText(elsewhere);

  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("Sent while the other reply streams.");
  await page.keyboard.press("Enter");
  // The page learns of the other reply: it says one is being written, and offers no Retry
  // (which would answer an older message).
  await expect(page.getByText("A reply is being written")).toBeVisible({ timeout: 20_000 });
  await expect(page.getByRole("button", { name: "Retry" })).toHaveCount(0);
  await expect(box).toHaveValue("Sent while the other reply streams.");
  // The timeline shows what is stored: the other tab's message, not this refused one.
  await expect(
    page.locator("[data-role='user']", { hasText: "Sent while the other reply streams." }),
  ).toHaveCount(0);
  await expect(
    page.locator("[data-role='user']", { hasText: "Tell me a long story." }),
  ).toHaveCount(1);
  // Once the other reply is stored, it shows; the text waits in the box to be sent.
  await expect(assistantText(page)).toBeVisible({ timeout: 40_000 });
  await expect(page.getByText("A reply is being written")).toHaveCount(0);
  await expect(box).toHaveValue("Sent while the other reply streams.");
});

test("a new chat takes its name in the list and the header as its first reply starts, not once it ends", async ({
  page,
  context,
}) => {
  const client = await signedIn(page, context, "first-title@example.com");
  const chatId = await createChat(client, a.url);
  await openChat(page, a.url, chatId);
  const header = page.getByRole("heading", { level: 1 });
  await expect(header).toHaveText("New chat");
  await page.getByRole("textbox", { name: "Message" }).fill("Plan the harbour lantern festival");
  await page.keyboard.press("Enter");
  await expect(assistantText(page)).toContainText(/\w{3,}/, { timeout: 15_000 });
  await expect(header).toHaveText("Plan the harbour lantern festival");
  await expect(
    page.getByRole("link", { name: "Plan the harbour lantern festival" }).first(),
  ).toBeVisible();
  // All while the reply still streams (it takes about 16 s).
  await expect(page.getByRole("button", { name: "Stop" })).toBeVisible();
  await page.getByRole("button", { name: "Stop" }).click();
  await expect(page.getByRole("button", { name: "Message stats" })).toBeVisible({
    timeout: 20_000,
  });
});

test("a reload on another instance follows the reply streaming on the first", async ({
  page,
  context,
}) => {
  const client = await signedIn(page, context, "resume@example.com");
  const chatId = await createChat(client, a.url);
  const response = await sendMessage(client, a.url, {
    chatId,
    modelId: MODEL,
    text: "Tell me a long story.",
  });
  expect(response.status).toBe(200);
  await readUntilText(response);

  await openChat(page, b.url, chatId);
  // The live reply, continuing: text is there before the reply ends, and it grows.
  const reply = assistantText(page);
  await expect(reply).toContainText(/\w{3,}/, { timeout: 15_000 });
  const early = ((await reply.textContent()) ?? "").length;
  await expect
    .poll(async () => ((await reply.textContent()) ?? "").length)
    .toBeGreaterThan(early + 40);
  await expect(page.getByRole("button", { name: "Message stats" })).toBeVisible({
    timeout: 30_000,
  });
  const stored = (await (await client.fetch(b.url, `/api/chats/${chatId}`)).json()) as {
    messages: Array<{ role: string; parts: Array<{ type: string; text?: string }> }>;
  };
  const storedText = stored.messages
    .at(-1)
    ?.parts.filter((part) => part.type === "text")
    .map((part) => part.text)
    .join("");
  expect(((await reply.textContent()) ?? "").replace(/\s+/g, " ").trim()).toContain(
    (storedText ?? "").replace(/\s+/g, " ").trim().slice(0, 200),
  );
});

test("Stop clicked the moment after sending stops the turn as it begins; nothing is stored, and the page shows the message unanswered as a reload does", async ({
  page,
  context,
}) => {
  const client = await signedIn(page, context, "stop-early@example.com");
  const chatId = await createChat(client, a.url);
  await openChat(page, a.url, chatId);
  fake.reset();
  // The message is held back until the server has answered the Stop, as when the Stop
  // overtakes the message on its way: the turn begins after its Stop.
  const stopAnswered = page.waitForResponse((response) => response.url().endsWith("/stop"));
  await page.route("**/api/chat", async (route) => {
    await stopAnswered;
    await route.continue();
  });
  await page.getByRole("textbox", { name: "Message" }).fill("Tell me a long story.");
  await page.keyboard.press("Enter");
  await page.getByRole("button", { name: "Stop" }).click();
  expect((await stopAnswered).status()).toBe(202);

  // No reply was written, and the page says so as a reload will: the message is unanswered,
  // not answered by an empty Stopped reply. A provider request, if the turn got that far, went
  // away at once.
  await expect(page.getByText("No reply.")).toBeVisible({ timeout: 20_000 });
  await expect(page.getByRole("button", { name: "Retry" })).toBeVisible();
  await expect(page.getByTestId("stopped")).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Continue" })).toHaveCount(0);
  await expect(page.getByText("Fake reply")).toHaveCount(0);
  await expect
    .poll(() => fake.requests.filter((r) => r.stream).every((r) => r.abortedAt !== null))
    .toBe(true);

  // Nothing of the reply was stored; Retry answers the message in full.
  await page.unroute("**/api/chat");
  await page.reload();
  await hydrated(page);
  await expect(page.getByText("No reply.")).toBeVisible({ timeout: 45_000 });
  await expect(page.getByTestId("stopped")).toHaveCount(0);
  await page.getByRole("button", { name: "Retry" }).click();
  await expect(assistantText(page)).toContainText(/\w{3,}/);
});

test("a Stop the server hears late: the page lets the begun reply go, then shows what was stored, with Retry", async ({
  page,
  context,
}) => {
  const client = await signedIn(page, context, "stop-late@example.com");
  const chatId = await createChat(client, a.url);
  await openChat(page, a.url, chatId);
  fake.reset();
  // The model is slow to say anything, and the Stop reaches the server only after the page has
  // given up waiting for it (3 s): the page has let go of a reply with nothing in it yet.
  fake.script({ fault: "slow", delayMs: 15_000 });
  await page.route("**/api/chats/*/stop", async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    await route.continue();
  });
  await page.getByRole("textbox", { name: "Message" }).fill("Tell me a long story.");
  await page.keyboard.press("Enter");
  await page.getByRole("button", { name: "Stop" }).click();

  // The stop reached the server, which stored no reply: the page says so and offers Retry
  // (an empty reply left on the page used to hide both, and the next message followed the
  // unanswered one).
  await expect(page.getByText("No reply.")).toBeVisible({ timeout: 20_000 });
  await expect(page.getByRole("button", { name: "Retry" })).toBeVisible();
  const stored = (await (await client.fetch(a.url, `/api/chats/${chatId}`)).json()) as {
    messages: Array<{ role: string }>;
  };
  expect(stored.messages.map((message) => message.role)).toEqual(["user"]);
  await page.unroute("**/api/chats/*/stop");
  await page.getByRole("button", { name: "Retry" }).click();
  await expect(assistantText(page)).toContainText(/\w{3,}/);
});

test("a Stop's answer that comes after the next message was sent leaves that message's reply streaming", async ({
  page,
  context,
}) => {
  const client = await signedIn(page, context, "stop-answer-late@example.com");
  const chatId = await createChat(client, a.url);
  await openChat(page, a.url, chatId);
  fake.reset();
  // The server hears the Stop at once; its answer reaches the page only much later, and fails.
  const { promise: released, resolve: release } = Promise.withResolvers<void>();
  await page.route("**/api/chats/*/stop", async (route) => {
    await route.fetch();
    await released;
    await route.fulfill({
      status: 502,
      contentType: "application/json",
      body: JSON.stringify({ error: { code: "unavailable:network", message: "Cut off." } }),
    });
  });
  const box = page.getByRole("textbox", { name: "Message" });
  const stop = page.getByRole("button", { name: "Stop" });
  await box.fill("Tell me a long story.");
  await box.press("Enter");
  // Stopped once it has written something: a reply stopped before that is no reply (No reply).
  await expect(assistantText(page)).toContainText(/\w{3,}/);
  await stop.click();
  await expect(page.getByRole("button", { name: "Message stats" })).toHaveCount(1, {
    timeout: 20_000,
  });

  await box.fill("Another long story, please.");
  await box.press("Enter");
  // The second reply is streaming.
  await expect(page.locator("[data-role='assistant']").nth(1)).toContainText(/\w{3,}/);
  await expect(stop).toBeVisible();
  release();
  // The late answer is about the first reply: this one goes on streaming in the page.
  await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 1_000)));
  await expect(stop).toBeVisible();
  await expect(page.getByRole("button", { name: "Message stats" })).toHaveCount(2, {
    timeout: 30_000,
  });
  await page.unroute("**/api/chats/*/stop");
});

test("a stop sent to one instance stops the turn running on another", async ({ page, context }) => {
  const client = await signedIn(page, context, "stop-api@example.com");
  const chatId = await createChat(client, a.url);
  fake.reset();
  const response = await sendMessage(client, a.url, {
    chatId,
    modelId: MODEL,
    text: "Tell me a long story.",
  });
  // Stop once the model is writing: a stop that lands earlier ends the turn before the
  // provider is ever asked (and there is no request to abort).
  const { seen: chunks, rest } = await readUntilText(response);
  const stop = await client.fetch(b.url, `/api/chats/${chatId}/stop`, { method: "POST" });
  expect(stop.status).toBe(202);
  for await (const chunk of rest) chunks.push(chunk);
  const finish = chunks.find((chunk) => chunk.type === "finish") as
    | { messageMetadata?: { stopped?: boolean } }
    | undefined;
  expect(finish?.messageMetadata?.stopped).toBe(true);
  await expect
    .poll(() => fake.requests.filter((request) => request.stream).at(-1)?.abortedAt ?? null)
    .not.toBeNull();
});

test("an instance killed mid-turn frees the chat within 30 s; the orphan offers Retry, answered on another instance", async ({
  page,
  context,
}) => {
  test.setTimeout(120_000);
  const client = await signedIn(page, context, "crash@example.com");
  const chatId = await createChat(client, a.url);
  const response = await sendMessage(client, a.url, {
    chatId,
    modelId: MODEL,
    text: "Tell me a long story.",
  });
  await readUntilText(response);
  await a.kill("SIGKILL");
  const killedAt = Date.now();

  await openChat(page, b.url, chatId);
  const orphan = page.getByText("No reply.");
  await expect(orphan).toBeVisible({ timeout: 45_000 });
  // The lease is 30 s from its last renewal; the page asks every 1.5 s, and a loaded machine
  // takes a few seconds more to answer and show it.
  expect(Date.now() - killedAt).toBeLessThanOrEqual(36_000);

  await page.getByRole("button", { name: "Retry" }).click();
  await expect(assistantText(page)).toContainText(/\w{3,}/);
  await expect(page.getByRole("button", { name: "Message stats" })).toBeVisible({
    timeout: 30_000,
  });
  const stored = (await (await client.fetch(b.url, `/api/chats/${chatId}`)).json()) as {
    messages: Array<{ role: string }>;
  };
  // Answered in place: one user message, one reply.
  expect(stored.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
});
