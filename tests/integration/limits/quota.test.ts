import { sql } from "drizzle-orm";
import { afterAll, afterEach, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible HTTP server, configured as Fold's provider before Fold loads.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({ models: [{ id: "fake-model", maxModelLen: 8192 }] });
});

// The read of the day's limits and usage fails while `dayUnreadable.now` is set, as a database
// that drops it would; every other statement goes through.
const dayUnreadable = vi.hoisted(() => ({ now: false }));
vi.mock("@/lib/db/queries/usage", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/db/queries/usage")>();
  return {
    ...actual,
    limitsAndUsageOn: async (...args: Parameters<typeof actual.limitsAndUsageOn>) => {
      if (dayUnreadable.now) throw new Error("Connection terminated unexpectedly");
      return actual.limitsAndUsageOn(...args);
    },
  };
});

import * as quotasRoute from "@/app/api/admin/quotas/route";
import * as userRoute from "@/app/api/admin/users/[id]/route";
import * as usageRoute from "@/app/api/admin/users/[id]/usage/route";
import * as chatApi from "@/app/api/chat/route";
import type { Database } from "@/lib/db/client";
import { acquireLease, releaseLease } from "@/lib/db/queries/leases";
import { loadHistory } from "@/lib/db/queries/messages";
import { TURN_HOLD_DEFAULT_TOKENS, usageOn } from "@/lib/db/queries/usage";
import { recordTokens, takeTurnQuota } from "@/lib/limits/quota";
import { quotaResetAt, usageDayOf } from "@/lib/limits/quota-day";
import { register, sessionOf, signIn } from "../../helpers/auth";
import { compactNowCall } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { isTurnActive, whileInsertsRefused, whileInsertsSlowed } from "../../helpers/db";
import { type Browser, call } from "../../helpers/http";
import { newChat, postRegenerate, postTurn, sendTurn } from "../../helpers/turns";
import { eventually } from "../../helpers/ui-stream";

const MODEL = "fake:fake-model";

afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  fake.configure({ chunkDelayMs: 0 });
  dayUnreadable.now = false;
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** A turn's model as admission names it. */
const fakeModel = { provider: "fake", model: "fake-model", notAllowed: () => new Error("no") };

/** A loop the model would run 30 steps long, each step resending the whole context. */
function scriptLongToolLoop(): void {
  fake.script(
    ...Array.from({ length: 30 }, () => ({
      toolCalls: [{ name: "current_time", arguments: {} }],
    })),
    { text: "Done." },
  );
}

type ErrorBody = { error: { code: string; message: string; resetsAt?: string } };

const turn = (database: Database, browser: Browser, chatId: string, text: string) =>
  sendTurn(database, browser, { chatId, modelId: MODEL, text });

function adminPatch(database: Database, admin: Browser, id: string, body: unknown) {
  return call(database, userRoute.PATCH, {
    path: `/api/admin/users/${id}`,
    method: "PATCH",
    body,
    params: { id },
    browser: admin,
  });
}

/** A new account whose own limits Ada (the admin) sets: its browser and id. */
async function userWithLimits(database: Database, email: string, limits: Record<string, number>) {
  const ada = await signIn(database, "ada@example.com");
  const user = await register(database, email);
  const id = (await sessionOf(database, user.browser))?.user.id ?? "";
  await adminPatch(database, ada.browser, id, limits);
  return { browser: user.browser, id };
}

/**
 * A reply the day's tokens ended: its finish chunk and its stored copy say Stopped and why. The
 * chat's stored messages, once the turn has let go of it.
 */
async function stoppedForQuota(
  database: Database,
  chatId: string,
  chunks: readonly Record<string, unknown>[],
  why = "token_quota",
) {
  const stopped = { stopped: true, stoppedFor: why };
  const finish = chunks.find((c) => c.type === "finish") as { messageMetadata?: unknown };
  expect(finish.messageMetadata).toMatchObject(stopped);
  await eventually(async () => !(await isTurnActive(database.db, chatId)));
  const stored = await loadHistory(database.db, chatId);
  expect(stored[1]?.metadata).toMatchObject(stopped);
  return stored;
}

function resetUsage(database: Database, admin: Browser, id: string) {
  return call(database, usageRoute.DELETE, {
    path: `/api/admin/users/${id}/usage`,
    method: "DELETE",
    params: { id },
    browser: admin,
  });
}

describeEachDriver("daily quotas", (use, driver) => {
  it("refuses the message past the default quota with a 429 that says when it resets", async () => {
    const database = use();
    const ada = await register(database, "ada@example.com");
    await call(database, quotasRoute.PUT, {
      path: "/api/admin/quotas",
      method: "PUT",
      body: { dailyTokenLimit: null, dailyMessageLimit: 2 },
      browser: ada.browser,
    });
    const bob = await register(database, "bob@example.com");
    const chatId = await newChat(database, bob.browser);
    expect((await turn(database, bob.browser, chatId, "one")).response.status).toBe(200);
    expect((await turn(database, bob.browser, chatId, "two")).response.status).toBe(200);
    const stored = await loadHistory(database.db, chatId);

    const refused = await turn(database, bob.browser, chatId, "three");
    const answered = Date.now();
    expect(refused.response.status).toBe(429);
    const body = (await refused.response.json()) as ErrorBody;
    const resetsAt = quotaResetAt(new Date()).toISOString();
    expect(body.error).toEqual({
      code: "too_many_requests:message_quota",
      message: expect.stringMatching(
        /^You have used all 2 messages of today's quota\. It resets at midnight UTC, in .+\.$/,
      ),
      resetsAt,
    });
    const retryAfter = Number(refused.response.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    // Retry-After is whole seconds rounded up at answer time: waiting that long from when
    // the answer arrived never retries before the reset.
    expect(answered + retryAfter * 1000).toBeGreaterThanOrEqual(Date.parse(resetsAt));
    // Nothing of the refused turn was saved, and the provider was not asked.
    expect((await loadHistory(database.db, chatId)).map((m) => m.id)).toEqual(
      stored.map((m) => m.id),
    );
    expect(fake.requests).toHaveLength(2);
  });

  it("lets a user's own limit replace the default, and a reset start the day over", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const bob = await signIn(database, "bob@example.com");
    const bobId = (await sessionOf(database, bob.browser))?.user.id ?? "";
    const chatId = await newChat(database, bob.browser);
    expect((await turn(database, bob.browser, chatId, "refused")).response.status).toBe(429);

    await adminPatch(database, ada.browser, bobId, { dailyMessageLimit: 3 });
    expect((await turn(database, bob.browser, chatId, "third")).response.status).toBe(200);
    expect((await turn(database, bob.browser, chatId, "fourth")).response.status).toBe(429);

    expect((await resetUsage(database, ada.browser, bobId)).status).toBe(200);
    expect((await turn(database, bob.browser, chatId, "after reset")).response.status).toBe(200);
    // Another user keeps the default.
    const carol = await register(database, "carol@example.com");
    const carolChat = await newChat(database, carol.browser);
    for (const text of ["a", "b"]) {
      expect((await turn(database, carol.browser, carolChat, text)).response.status).toBe(200);
    }
    expect((await turn(database, carol.browser, carolChat, "c")).response.status).toBe(429);
  });

  it("keeps the tokens a turn spends after an admin's reset: its hold is not taken off the new count", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const kim = await userWithLimits(database, "reset-mid-turn@example.com", {
      dailyTokenLimit: 1_000_000,
    });
    const chatId = await newChat(database, kim.browser);
    fake.script({ text: "A slow answer.", delayMs: 1_500 });
    const running = turn(database, kim.browser, chatId, "Take your time.");
    const today = () => usageOn(database.db, kim.id, usageDayOf(new Date()));
    // Admitted, holding its estimate while the provider thinks.
    await eventually(async () => (await today()).messages === 1);
    expect((await resetUsage(database, ada.browser, kim.id)).status).toBe(200);
    expect(await today()).toEqual({ messages: 0, tokens: 0 });

    expect((await running).response.status).toBe(200);
    // The provider's count of the turn is the day's, once the turn let go of its hold.
    const spent = fake.requests[0]?.promptTokens ?? 0;
    expect(spent).toBeGreaterThan(0);
    const usage = await eventually(async () => {
      const now = await today();
      return now.tokens > spent ? now : null;
    });
    expect(usage.tokens).toBeLessThan(spent + 100);
    expect(usage.messages).toBe(0);
  });

  it("gives a message back to the day it was taken from only: after a reset the turns counted since keep theirs", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const lou = await userWithLimits(database, "reset-give-back@example.com", {
      dailyTokenLimit: 1_000_000,
      dailyMessageLimit: 10,
    });
    const model = { provider: "fake", model: "fake-model", notAllowed: () => new Error("no") };
    const before = await takeTurnQuota(database.db, lou.id, model);
    expect((await resetUsage(database, ada.browser, lou.id)).status).toBe(200);
    const after = await takeTurnQuota(database.db, lou.id, model);
    // The turn admitted before the reset never starts: it withdraws its message and its hold.
    await before.withdraw();
    expect(await usageOn(database.db, lou.id, usageDayOf(new Date()))).toEqual({
      messages: 1,
      tokens: after.heldTokens,
    });
    await after.withdraw();
    expect(await usageOn(database.db, lou.id, usageDayOf(new Date()))).toEqual({
      messages: 0,
      tokens: 0,
    });
  });

  it("counts the provider's tokens and refuses the next turn once the token quota is spent", async () => {
    const database = use();
    const dora = await userWithLimits(database, "dora@example.com", {
      dailyMessageLimit: 100,
      dailyTokenLimit: 50,
    });
    const doraId = dora.id;
    const chatId = await newChat(database, dora.browser);

    expect((await turn(database, dora.browser, chatId, "spend some tokens")).response.status).toBe(
      200,
    );
    const reported = fake.requests;
    expect(reported).toHaveLength(1);
    const day = usageDayOf(new Date());
    const usage = await eventually(async () => {
      const now = await usageOn(database.db, doraId, day);
      return now.tokens > 0 ? now : null;
    });
    expect(usage).toMatchObject({ messages: 1 });
    expect(usage.tokens).toBeGreaterThan(50);

    const refused = await turn(database, dora.browser, chatId, "more");
    expect(refused.response.status).toBe(429);
    expect(((await refused.response.json()) as ErrorBody).error).toMatchObject({
      code: "too_many_requests:token_quota",
      message: expect.stringContaining("today's quota of 50 tokens"),
    });

    // Compact now calls the summarizer: refused too, before any provider call.
    const compacted = await compactNowCall(database, dora.browser, chatId, { modelId: MODEL });
    expect(compacted.status).toBe(429);
    expect(((await compacted.json()) as ErrorBody).error).toMatchObject({
      code: "too_many_requests:token_quota",
      message: expect.stringContaining("today's quota of 50 tokens"),
    });
    expect(fake.requests).toHaveLength(1);
  });

  it("stops a long tool loop once the day's tokens are spent: the reply ends there, Stopped, saying why", async () => {
    const database = use();
    const { browser } = await userWithLimits(database, "looper@example.com", {
      dailyTokenLimit: 300,
    });
    const chatId = await newChat(database, browser);
    scriptLongToolLoop();
    const { response, chunks } = await turn(database, browser, chatId, "Check the time 30 times.");
    expect(response.status).toBe(200);
    // The first step alone spends the 300 tokens: its tokens are on the day before the loop asks
    // whether to go on, so it stops before the second.
    expect(fake.requests).toHaveLength(1);
    const stored = await stoppedForQuota(database, chatId, chunks);
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant"]);
    // Its stats are the provider's own counts of every step, not an estimate of the first.
    const promptTokens = fake.requests.reduce((sum, r) => sum + r.promptTokens, 0);
    expect(
      (stored[1]?.metadata as { stats?: { inputTokens?: number } } | null)?.stats?.inputTokens,
    ).toBe(promptTokens);
    // And the next message is refused until the quota resets.
    expect((await turn(database, browser, chatId, "Go on.")).response.status).toBe(429);
  });

  it("records a turn's tokens after a failed write (a blip), and keeps its hold when they never land", async () => {
    const database = use();
    const dora = await userWithLimits(database, "tokens-blip@example.com", { dailyTokenLimit: 50 });
    const day = usageDayOf(new Date());
    // The first write of a provider call's tokens (messages = 0) fails; its retry goes through.
    await database.db.execute(sql.raw("create sequence usage_blip"));
    const blipped = await newChat(database, dora.browser);
    await whileInsertsRefused(
      database.db,
      "usage_day",
      "new.messages = 0 and nextval('usage_blip') = 1",
      async () => {
        expect((await turn(database, dora.browser, blipped, "spend")).response.status).toBe(200);
      },
    );
    const spent = fake.requests[0]?.promptTokens ?? 0;
    expect(spent).toBeGreaterThan(50);
    // Its usage is on the day by the time the chat is free: what the provider counted, not the
    // turn's hold (released once the usage landed).
    const usage = await usageOn(database.db, dora.id, day);
    expect(usage.tokens).toBeGreaterThan(spent);
    expect(usage.tokens).toBeLessThan(spent + 100);
    expect((await turn(database, dora.browser, blipped, "more")).response.status).toBe(429);

    // Every write refused: the turn's hold stays on the day in place of its usage.
    const { browser: erin, id: erinId } = await userWithLimits(database, "lost@example.com", {
      dailyTokenLimit: 50,
    });
    const lost = await newChat(database, erin);
    await whileInsertsRefused(database.db, "usage_day", "new.messages = 0", async () => {
      expect((await turn(database, erin, lost, "spend")).response.status).toBe(200);
    });
    expect((await usageOn(database.db, erinId, day)).tokens).toBeGreaterThan(50);
    expect((await turn(database, erin, lost, "more")).response.status).toBe(429);
  });

  it.runIf(driver === "pg")(
    "takes a turn's hold off only once its tokens are on the day: a turn sent right after is refused",
    async () => {
      const database = use();
      const eve = await userWithLimits(database, "slow@example.com", { dailyTokenLimit: 50 });
      const chatId = await newChat(database, eve.browser);
      let next = 0;
      await whileInsertsSlowed(database.db, "usage_day", "new.messages = 0", 2_000, async () => {
        expect((await turn(database, eve.browser, chatId, "spend")).response.status).toBe(200);
        next = (await turn(database, eve.browser, chatId, "right after")).response.status;
      });
      expect(fake.requests[0]?.promptTokens ?? 0).toBeGreaterThan(50);
      expect(next).toBe(429);
    },
  );

  it("says a day's tokens held by replies running in other chats are held, to try again soon, not used up until midnight", async () => {
    const database = use();
    const gus = await userWithLimits(database, "held@example.com", {
      dailyTokenLimit: 10_000,
      dailyMessageLimit: 100,
    });
    // Three replies running in three chats: each holds its estimate, none spent yet.
    const running = [];
    for (let i = 0; i < 3; i++) {
      const chatId = await newChat(database, gus.browser);
      const lease = await acquireLease(database.db, chatId, 60_000);
      if (!lease) throw new Error("the chat's lease was not free");
      running.push({ lease, ticket: await takeTurnQuota(database.db, gus.id, fakeModel) });
    }
    const chatId = await newChat(database, gus.browser);
    const { response } = await turn(database, gus.browser, chatId, "one more");
    expect(response.status).toBe(429);
    expect(Number(response.headers.get("retry-after"))).toBeLessThanOrEqual(30);
    const { error } = (await response.json()) as ErrorBody;
    expect(error.message).toMatch(
      /^Today's tokens are used up or held by your replies still being written in other chats .* Try again once they finish\.$/,
    );
    for (const { lease, ticket } of running) {
      await ticket.release();
      await releaseLease(database.db, lease);
    }
    // They finished: the day was never used up.
    expect((await turn(database, gus.browser, chatId, "one more")).response.status).toBe(200);
  });

  it("says an allowance of 0 is none at all, not a quota used up that midnight resets", async () => {
    const database = use();
    for (const [limit, noun] of [
      ["dailyTokenLimit", "token"],
      ["dailyMessageLimit", "message"],
    ] as const) {
      const { browser } = await userWithLimits(database, `none-${noun}@example.com`, {
        [limit]: 0,
      });
      const chatId = await newChat(database, browser);
      const { response } = await turn(database, browser, chatId, "hello");
      expect(response.status).toBe(429);
      expect(response.headers.get("retry-after")).toBeNull();
      const { error } = (await response.json()) as ErrorBody;
      expect(error.message).toBe(
        `Your account has no daily ${noun} allowance, so it cannot send messages. Ask an admin to set one.`,
      );
      expect(error.resetsAt).toBeUndefined();
    }
    expect(fake.requests).toHaveLength(0);
  });

  it("stops a tool loop whose day cannot be read between two steps: unchecked, it would spend past the quota", async () => {
    const database = use();
    const { browser } = await userWithLimits(database, "unread@example.com", {
      dailyTokenLimit: 300,
    });
    const chatId = await newChat(database, browser);
    scriptLongToolLoop();
    dayUnreadable.now = true;
    const { response, chunks } = await turn(database, browser, chatId, "Check the time 30 times.");
    dayUnreadable.now = false;
    expect(response.status).toBe(200);
    expect(fake.requests).toHaveLength(1);
    await stoppedForQuota(database, chatId, chunks, "quota_unchecked");
  });

  it("lets Compact now run once the day's messages are used up: it takes none", async () => {
    const database = use();
    const jay = await userWithLimits(database, "jay@example.com", { dailyMessageLimit: 1 });
    const chatId = await newChat(database, jay.browser);
    expect((await turn(database, jay.browser, chatId, "one")).response.status).toBe(200);
    expect((await turn(database, jay.browser, chatId, "two")).response.status).toBe(429);
    const compacted = await compactNowCall(database, jay.browser, chatId, { modelId: MODEL });
    expect(compacted.status).toBe(200);
    expect((await usageOn(database.db, jay.id, usageDayOf(new Date()))).messages).toBe(1);
  });

  it("lets exactly the quota's number of turns through when they start at once", async () => {
    const database = use();
    const frank = await userWithLimits(database, "frank@example.com", { dailyMessageLimit: 3 });
    const frankId = frank.id;
    const chats = await Promise.all(
      Array.from({ length: 7 }, () => newChat(database, frank.browser)),
    );
    const answers = await Promise.all(
      chats.map((chatId, i) => turn(database, frank.browser, chatId, `at once ${i}`)),
    );
    const statuses = answers.map((a) => a.response.status).sort();
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429]);
    expect((await usageOn(database.db, frankId, usageDayOf(new Date()))).messages).toBe(3);
  });

  it("lets turns started at once stop at the token limit too: each holds its estimate while it runs", async () => {
    const database = use();
    const gus = await userWithLimits(database, "held-at-once@example.com", {
      dailyTokenLimit: 100,
    });
    const chats = await Promise.all(
      Array.from({ length: 6 }, () => newChat(database, gus.browser)),
    );
    const answers = await Promise.all(
      chats.map((chatId, i) => turn(database, gus.browser, chatId, `at once ${i}`)),
    );
    // The first admitted holds more than the 100 tokens left: the others wait for tomorrow.
    const statuses = answers.map((a) => a.response.status).sort();
    expect(statuses).toEqual([200, 429, 429, 429, 429, 429]);
    expect(fake.requests).toHaveLength(1);
    // Once it ended, the day has what the provider counted, not the estimate it held.
    const spent = fake.requests[0]?.promptTokens ?? 0;
    const usage = await eventually(async () => {
      const now = await usageOn(database.db, gus.id, usageDayOf(new Date()));
      return now.tokens < TURN_HOLD_DEFAULT_TOKENS && now.tokens > spent ? now : null;
    });
    expect(usage.messages).toBe(1);
  });

  it("does not count a running turn's own estimate against it: a tool loop under the limit goes on", async () => {
    const database = use();
    const { browser } = await userWithLimits(database, "held-own@example.com", {
      dailyTokenLimit: TURN_HOLD_DEFAULT_TOKENS,
    });
    const chatId = await newChat(database, browser);
    fake.script(
      ...Array.from({ length: 3 }, () => ({
        toolCalls: [{ name: "current_time", arguments: {} }],
      })),
      { text: "Done." },
    );
    const { response, chunks } = await turn(database, browser, chatId, "Check the time 3 times.");
    expect(response.status).toBe(200);
    expect(fake.requests).toHaveLength(4);
    const finish = chunks.find((c) => c.type === "finish") as {
      messageMetadata?: { stoppedFor?: string };
    };
    expect(finish.messageMetadata?.stoppedFor).toBeUndefined();
  });

  it("sends no window-cut retry once the day's tokens are spent: the cut reply ends there, Stopped, saying why", async () => {
    const database = use();
    const { browser } = await userWithLimits(database, "cut-retry@example.com", {
      dailyTokenLimit: 500,
    });
    const chatId = await newChat(database, browser);
    // The model writes until the 8,192-token window cuts it: not an answer, which a retry would
    // ask again, as large a request as the first.
    fake.script({ text: "word ".repeat(9_000) }, { text: "Short answer." });
    const { response, chunks } = await turn(database, browser, chatId, "Tell me everything.");
    expect(response.status).toBe(200);
    expect(fake.requests).toHaveLength(1);
    await stoppedForQuota(database, chatId, chunks);
  });

  it("takes a turn's own estimate off the count only while the day holds it: not once released, nor after midnight or a reset", async () => {
    const database = use();
    const ada = await signIn(database, "ada@example.com");
    const { id } = await userWithLimits(database, "own-hold@example.com", {
      dailyTokenLimit: 10_000,
    });
    // Held: the turn's own estimate is not spent, so a day under the limit without it has room.
    const held = await takeTurnQuota(database.db, id, fakeModel);
    await recordTokens(database.db, id, 9_900);
    expect(await held.tokensLeft()).toBe(true);
    await recordTokens(database.db, id, 200);
    expect(await held.tokensLeft()).toBe(false);
    // Released (the turn ended; the compaction it starts asks after that): the day is still
    // spent, its estimate is not taken off a count that no longer holds it.
    await held.release();
    expect(await held.tokensLeft()).toBe(false);

    // Reset by an admin while a turn runs: the new count never held its estimate.
    expect((await resetUsage(database, ada.browser, id)).status).toBe(200);
    const running = await takeTurnQuota(database.db, id, fakeModel);
    expect((await resetUsage(database, ada.browser, id)).status).toBe(200);
    await recordTokens(database.db, id, 10_000 + 100);
    expect(await running.tokensLeft()).toBe(false);

    // Admitted late one evening, its tool loop goes on after midnight: the new day never held
    // its estimate either.
    const evening = new Date("2031-03-04T23:59:50Z");
    const morning = new Date("2031-03-05T00:00:10Z");
    const late = await takeTurnQuota(database.db, id, fakeModel, evening);
    await recordTokens(database.db, id, 10_000 + 100, morning);
    expect(await late.tokensLeft(morning)).toBe(false);
  });

  it("releases a turn's hold after all when its first release fails (a database blip): the day is not lost to it", async () => {
    const database = use();
    const { id } = await userWithLimits(database, "blip@example.com", {
      dailyTokenLimit: TURN_HOLD_DEFAULT_TOKENS,
    });
    const ticket = await takeTurnQuota(database.db, id, fakeModel);
    expect(ticket.heldTokens).toBe(TURN_HOLD_DEFAULT_TOKENS);
    // The turn ends while the database drops its statement once.
    vi.spyOn(database.db, "update").mockImplementationOnce(() => {
      throw new Error("Connection terminated unexpectedly");
    });
    await expect(ticket.release()).rejects.toThrow("Connection terminated");
    // Left on the day, the estimate would refuse every turn until midnight.
    await eventually(
      async () => (await usageOn(database.db, id, usageDayOf(new Date()))).tokens === 0,
    );
    const next = await takeTurnQuota(database.db, id, fakeModel);
    await next.withdraw();
  });

  it("frees the chat a refused turn had taken, before it answers", async () => {
    const database = use();
    const gus = await userWithLimits(database, "gus@example.com", { dailyMessageLimit: 1 });
    const chatId = await newChat(database, gus.browser);
    expect((await turn(database, gus.browser, chatId, "one")).response.status).toBe(200);
    // Naming its model, the turn takes the chat with its lease while the quota is asked.
    const refused = await postTurn(database, gus.browser, { chatId, modelId: MODEL, text: "two" });
    expect(refused.status).toBe(429);
    expect(await isTurnActive(database.db, chatId)).toBe(false);
    // Without a model named, the chat's own model is admitted once the chat is taken.
    const unnamed = await call(database, chatApi.POST, {
      path: "/api/chat",
      method: "POST",
      body: {
        trigger: "submit-message",
        chatId,
        message: { id: "u-unnamed", role: "user", parts: [{ type: "text", text: "three" }] },
      },
      browser: gus.browser,
    });
    expect(unnamed.status).toBe(429);
    expect(await isTurnActive(database.db, chatId)).toBe(false);
  });

  it("spends nothing on a turn sent to a chat that is not the user's", async () => {
    const database = use();
    const ivy = await register(database, "ivy@example.com");
    const ivysChat = await newChat(database, ivy.browser);
    const hal = await userWithLimits(database, "hal@example.com", { dailyMessageLimit: 5 });
    // The quota is asked at the same time as the chat: the 404 gives its message back.
    const refused = await postTurn(database, hal.browser, {
      chatId: ivysChat,
      modelId: MODEL,
      text: "not mine",
    });
    expect(refused.status).toBe(404);
    expect(await isTurnActive(database.db, ivysChat)).toBe(false);
    expect((await usageOn(database.db, hal.id, usageDayOf(new Date()))).messages).toBe(0);
  });

  it("gives the message back when the turn does not start", async () => {
    const database = use();
    const erin = await register(database, "erin@example.com");
    const erinId = (await sessionOf(database, erin.browser))?.user.id ?? "";
    const chatId = await newChat(database, erin.browser);
    // Nothing to regenerate in an empty chat: 404 before any model call.
    const response = await postRegenerate(database, erin.browser, { chatId, modelId: MODEL });
    expect(response.status).toBe(404);
    expect(await usageOn(database.db, erinId, usageDayOf(new Date()))).toEqual({
      messages: 0,
      tokens: 0,
    });
  });

  it("gives the message back when the provider fails before answering anything, retries included", async () => {
    const database = use();
    const gus = await register(database, "provider-down@example.com");
    expect(gus.response.status).toBe(200);
    const gusId = (await sessionOf(database, gus.browser))?.user.id ?? "";
    const chatId = await newChat(database, gus.browser);
    // The AI SDK asks three times; the provider fails each time.
    fake.script({ fault: "500" }, { fault: "500" }, { fault: "500" });
    const failed = await turn(database, gus.browser, chatId, "Are you there?");
    expect(failed.chunks.some((c) => c.type === "error")).toBe(true);
    expect(fake.requests.map((r) => r.status)).toEqual([500, 500, 500]);
    expect((await usageOn(database.db, gusId, usageDayOf(new Date()))).messages).toBe(0);
    // The message stays, unanswered (Retry answers it); a reply that comes counts it.
    const stored = await loadHistory(database.db, chatId);
    expect(stored.map((m) => m.role)).toEqual(["user"]);
    expect((await postRegenerate(database, gus.browser, { chatId, modelId: MODEL })).status).toBe(
      200,
    );
    await eventually(async () => !(await isTurnActive(database.db, chatId)));
    expect((await usageOn(database.db, gusId, usageDayOf(new Date()))).messages).toBe(1);
  });

  it("gives the message back when it is refused as too long for the window, storing nothing", async () => {
    const database = use();
    const finn = await register(database, "finn@example.com");
    const finnId = (await sessionOf(database, finn.browser))?.user.id ?? "";
    const chatId = await newChat(database, finn.browser);
    // About 12,000 tokens against the fake model's 8,192: refused before it is stored.
    const refused = await turn(database, finn.browser, chatId, "ledger entry ".repeat(6_000));
    expect(refused.response.status).toBe(400);
    expect(
      ((await refused.response.json()) as { error: { message: string } }).error.message,
    ).toMatch(/too long on its own/);
    expect(fake.requests).toHaveLength(0);
    expect(await loadHistory(database.db, chatId)).toEqual([]);
    expect((await usageOn(database.db, finnId, usageDayOf(new Date()))).messages).toBe(0);
    // A message that is answered still counts.
    expect((await turn(database, finn.browser, chatId, "a short one")).response.status).toBe(200);
    expect((await usageOn(database.db, finnId, usageDayOf(new Date()))).messages).toBe(1);
  });
});
