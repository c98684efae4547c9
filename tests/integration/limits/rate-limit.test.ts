import { eq, sql } from "drizzle-orm";
import { RateLimiterDrizzle } from "rate-limiter-flexible";
import { beforeAll, expect, it, vi } from "vitest";

vi.hoisted(() => {
  // Small limits, explicit: the test setup turns rate limits off for every other file.
  process.env.RATE_LIMIT_SIGN_UP_PER_HOUR = "3";
  process.env.RATE_LIMIT_SIGN_IN_PER_MINUTE = "4";
  process.env.RATE_LIMIT_SIGN_IN_FAILURES_PER_ACCOUNT = "3";
  process.env.RATE_LIMIT_TURNS_PER_MINUTE = "2";
  process.env.DEMO_MODEL = "always";
  delete process.env.TRUST_PROXY;
});

// Admission's quota statement can be made to fail once, as a database that drops it would.
const quotaStatement = vi.hoisted(() => ({ failNext: false }));
vi.mock("@/lib/db/queries/usage", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/db/queries/usage")>();
  return {
    ...actual,
    takeMessageWithinLimits: async (...args: Parameters<typeof actual.takeMessageWithinLimits>) => {
      if (!quotaStatement.failNext) return actual.takeMessageWithinLimits(...args);
      quotaStatement.failNext = false;
      throw Object.assign(new Error("Connection terminated unexpectedly"), { code: "57P01" });
    },
  };
});

import * as authRoute from "@/app/api/auth/[...all]/route";
import * as chatsListRoute from "@/app/api/chats/route";
import type { Database } from "@/lib/db/client";
import { withDatabase } from "@/lib/db/client";
import { acquireLease, releaseLease } from "@/lib/db/queries/leases";
import { loadHistory } from "@/lib/db/queries/messages";
import { usageOn } from "@/lib/db/queries/usage";
import { countUsers } from "@/lib/db/queries/users";
import { chat } from "@/lib/db/schema";
import { installPeerAddressStamp, PEER_ADDRESS_HEADER } from "@/lib/limits/peer-address";
import { usageDayOf } from "@/lib/limits/quota-day";
import { consumeRateLimit } from "@/lib/limits/rate-limit";
import { TooManyRequestsError } from "@/lib/limits/too-many-requests";
import { PASSWORD, sessionOf } from "../../helpers/auth";
import { compactNowCall, continueCall } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { anonymous, type Browser, call } from "../../helpers/http";
import { newChat, sendTurn } from "../../helpers/turns";

// In the server, the stamp is installed at start and the socket's address set per request;
// here each request carries the address its (simulated) socket had.
beforeAll(() => installPeerAddressStamp());

type Attempt = { peer: string; forwardedFor?: string; browser?: Browser };

function authPost(database: Database, path: string, body: unknown, from: Attempt) {
  const headers: Record<string, string> = { [PEER_ADDRESS_HEADER]: from.peer };
  if (from.forwardedFor) headers["x-forwarded-for"] = from.forwardedFor;
  const all = path.replace("/api/auth/", "").split("/");
  return call(database, authRoute.POST, {
    path,
    method: "POST",
    body,
    headers,
    params: { all },
    browser: from.browser,
  });
}

function signUp(database: Database, email: string, from: Attempt) {
  const body = { email, password: PASSWORD, name: "x" };
  return authPost(database, "/api/auth/sign-up/email", body, from);
}

/** A new user, signed up from `peer` in a browser of its own, with one empty chat. */
async function userWithChat(database: Database, email: string, peer: string) {
  const browser = anonymous();
  const signedUp = await signUp(database, email, { peer, browser });
  expect(signedUp.status).toBe(200);
  return { browser, chatId: await newChat(database, browser) };
}

function signIn(database: Database, email: string, password: string, from: Attempt) {
  return authPost(database, "/api/auth/sign-in/email", { email, password }, from);
}

describeEachDriver("rate limits", (use) => {
  it("limits sign-ups per socket address: a rotating X-Forwarded-For does not get around it", async () => {
    const database = use();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await signUp(database, `rotating-${i}@example.com`, {
        peer: "203.0.113.9",
        forwardedFor: `198.51.100.${i}`,
      });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
    expect(await countUsers(database.db)).toBe(3);

    const refused = await signUp(database, "late@example.com", { peer: "203.0.113.9" });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // Shaped like better-auth's own errors, so the sign-up form shows the message.
    expect(await refused.json()).toMatchObject({
      code: "too_many_requests:sign-up",
      message: expect.stringMatching(/^Too many new accounts from your network\. Try again in /),
      resetsAt: expect.any(String),
    });
    // Another address has its own allowance.
    expect((await signUp(database, "elsewhere@example.com", { peer: "192.0.2.50" })).status).toBe(
      200,
    );
  });

  it("limits sign-in attempts per address, right or wrong password", async () => {
    const database = use();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const password = i % 2 === 0 ? "wrong password!" : PASSWORD;
      const response = await signIn(database, "rotating-0@example.com", password, {
        peer: "203.0.113.20",
        forwardedFor: `10.9.8.${i}`,
      });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([401, 200, 401, 200, 429, 429]);
    const other = await signIn(database, "rotating-0@example.com", PASSWORD, {
      peer: "2001:db8:5::1",
    });
    expect(other.status).toBe(200);
  });

  it("limits wrong passwords per account from any address; a right one starts the count over", async () => {
    const database = use();
    expect((await signUp(database, "guessed@example.com", { peer: "192.0.2.77" })).status).toBe(
      200,
    );
    // Each guess from another /64: the per-address limit never applies.
    const from = (i: number) => ({ peer: `2001:db8:0:${(100 + i).toString(16)}::1` });
    const guess = (i: number, password = "wrong password!") =>
      signIn(database, "GUESSED@example.com", password, from(i));
    expect((await guess(0)).status).toBe(401);
    // A right password forgets the wrong ones before it.
    expect((await guess(1, PASSWORD)).status).toBe(200);
    const statuses: number[] = [];
    for (let i = 2; i < 7; i++) statuses.push((await guess(i)).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    // Locked for now, even with the right password; it says so, and when it ends.
    const locked = await guess(7, PASSWORD);
    expect(locked.status).toBe(429);
    expect(await locked.json()).toMatchObject({
      code: "too_many_requests:sign-in-account",
      message: expect.stringMatching(/^Too many wrong passwords for this account\. Try again in /),
    });
    // Another account is not held by it.
    expect((await signIn(database, "rotating-1@example.com", PASSWORD, from(8))).status).toBe(200);
  });

  it("a browser the account signed in on before gets in while strangers' wrong passwords hold the account; its own wrong ones hold only it", async () => {
    const database = use();
    expect((await signUp(database, "owner@example.com", { peer: "192.0.2.79" })).status).toBe(200);
    let n = 0;
    const from = (browser?: Browser) => ({
      peer: `2001:db8:2:${(0x100 + n++).toString(16)}::1`,
      browser,
    });
    const owner = anonymous();
    expect((await signIn(database, "owner@example.com", PASSWORD, from(owner))).status).toBe(200);
    expect(owner.cookie).toMatch(/fold_sign_in_device=[\w-]+\.[\w-]+/);

    // Strangers spend the account's allowance, from addresses of their own.
    const stranger = async (password = "wrong password!", browser?: Browser) =>
      (await signIn(database, "owner@example.com", password, from(browser))).status;
    expect([await stranger(), await stranger(), await stranger(), await stranger()]).toEqual([
      401, 401, 401, 429,
    ]);
    expect(await stranger(PASSWORD)).toBe(429);
    // The owner's browser is not held by them.
    const signOut = () => {
      owner.cookie = owner.cookie
        .split("; ")
        .filter((c) => c.startsWith("fold_sign_in_device="))
        .join("; ");
    };
    signOut();
    expect((await signIn(database, "owner@example.com", PASSWORD, from(owner))).status).toBe(200);
    expect(owner.cookie).toMatch(/session_token=/);

    // A cookie that is not the server's, or was signed for another account, is a stranger's.
    const [, entry = ""] = owner.cookie.match(/fold_sign_in_device=([^;]+)/) ?? [];
    const tampered = {
      cookie: `fold_sign_in_device=${entry.slice(0, -2)}${entry.endsWith("A") ? "B" : "A"}`,
    };
    expect(await stranger(PASSWORD, tampered)).toBe(429);
    expect((await signUp(database, "neighbour@example.com", { peer: "192.0.2.80" })).status).toBe(
      200,
    );
    const neighbour = anonymous();
    expect(
      (await signIn(database, "neighbour@example.com", PASSWORD, from(neighbour))).status,
    ).toBe(200);
    const [neighbourDevice = ""] = neighbour.cookie.match(/fold_sign_in_device=[^;]+/) ?? [];
    expect(await stranger(PASSWORD, { cookie: neighbourDevice })).toBe(429);

    // Signed in to another account too, the browser stays known for this one.
    signOut();
    expect((await signIn(database, "neighbour@example.com", PASSWORD, from(owner))).status).toBe(
      200,
    );
    signOut();
    expect(owner.cookie.split("~")).toHaveLength(2);
    expect((await signIn(database, "owner@example.com", PASSWORD, from(owner))).status).toBe(200);

    // The owner's browser's own wrong passwords are counted on it, as many as strangers get.
    signOut();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push(await stranger("wrong password!", owner));
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect(await stranger(PASSWORD, owner)).toBe(429);
  });

  it("counts a password change's wrong current passwords as wrong sign-ins: a session cannot guess its account's password", async () => {
    const database = use();
    expect((await signUp(database, "changer@example.com", { peer: "192.0.2.81" })).status).toBe(
      200,
    );
    let n = 0;
    const from = (browser: Browser) => ({
      peer: `2001:db8:3:${(0x100 + n++).toString(16)}::1`,
      browser,
    });
    const session = anonymous();
    expect((await signIn(database, "changer@example.com", PASSWORD, from(session))).status).toBe(
      200,
    );
    const change = async (currentPassword: string) =>
      (
        await authPost(
          database,
          "/api/auth/change-password",
          { currentPassword, newPassword: "a new password that is long enough" },
          from(session),
        )
      ).status;
    // A change the password allows goes through, and starts the count over.
    expect(await change(PASSWORD)).toBe(200);
    expect(await change("a new password that is long enough")).toBe(200);
    // Three wrong guesses (the allowance), then none more, the right password neither.
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push(await change(`guess ${i}`));
    expect(statuses).toEqual([400, 400, 400, 429]);
    expect(await change("a new password that is long enough")).toBe(429);
    // A change refused for another reason (a new password too short) spends nothing.
    const other = anonymous();
    expect((await signUp(database, "short@example.com", { peer: "192.0.2.82" })).status).toBe(200);
    expect((await signIn(database, "short@example.com", PASSWORD, from(other))).status).toBe(200);
    for (let i = 0; i < 4; i++) {
      const response = await authPost(
        database,
        "/api/auth/change-password",
        { currentPassword: PASSWORD, newPassword: "short" },
        from(other),
      );
      expect(response.status).toBe(400);
    }
  });

  it("a session cannot ask whether a password is its account's outside the limits: better-auth's /verify-password is not served", async () => {
    const database = use();
    expect((await signUp(database, "verifier@example.com", { peer: "192.0.2.83" })).status).toBe(
      200,
    );
    const session = anonymous();
    const from = { peer: "192.0.2.84", browser: session };
    expect((await signIn(database, "verifier@example.com", PASSWORD, from)).status).toBe(200);
    for (const password of ["a wrong guess", PASSWORD]) {
      const response = await authPost(database, "/api/auth/verify-password", { password }, from);
      expect(response.status).toBe(404);
    }
  });

  it("counts guesses sent at once before any is answered; a sign-in must be JSON", async () => {
    const database = use();
    expect((await signUp(database, "burst@example.com", { peer: "192.0.2.78" })).status).toBe(200);
    const from = (i: number) => ({ peer: `2001:db8:1:${(200 + i).toString(16)}::1` });
    const statuses = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        signIn(database, "burst@example.com", `wrong password ${i}`, from(i)).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 401)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
    // A form body (where better-auth reads a repeated email's last) is refused, not counted
    // against a decoy.
    const form = await call(database, authRoute.POST, {
      path: "/api/auth/sign-in/email",
      method: "POST",
      rawBody: "email=decoy%40example.com&email=burst%40example.com&password=x",
      headers: {
        [PEER_ADDRESS_HEADER]: "2001:db8:1:300::1",
        "content-type": "application/x-www-form-urlencoded",
      },
      params: { all: ["sign-in", "email"] },
    });
    expect(form.status).toBe(400);
  });

  it("a sign-in body better-auth reads otherwise than Fold is refused or counted, never let through uncounted", async () => {
    const database = use();
    expect((await signUp(database, "oddbody@example.com", { peer: "192.0.2.79" })).status).toBe(
      200,
    );
    const odd = (rawBody: string, contentType: string, i: number) =>
      call(database, authRoute.POST, {
        path: "/api/auth/sign-in/email",
        method: "POST",
        rawBody,
        // Each from an address of its own: only the account's count can hold them.
        headers: {
          [PEER_ADDRESS_HEADER]: `2001:db8:2:${(100 + i).toString(16)}::1`,
          "content-type": contentType,
        },
        params: { all: ["sign-in", "email"] },
      });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      // A form whose type only mentions JSON in a parameter (better-auth reads the form).
      const form = `email=oddbody%40example.com&password=wrong-${i}`;
      statuses.push(
        (await odd(form, "application/x-www-form-urlencoded; x=application/json", i)).status,
      );
      // JSON behind two byte-order marks (one reader skips both, JSON.parse neither).
      const json = JSON.stringify({ email: "oddbody@example.com", password: `wrong-bom-${i}` });
      statuses.push((await odd(`\uFEFF\uFEFF${json}`, "application/json", 10 + i)).status);
    }
    expect(statuses.every((s) => s === 400 || s === 429)).toBe(true);
    // Ordinary wrong passwords still count from 3 down, then the right one is held.
    for (let i = 0; i < 3; i++) {
      const wrong = await signIn(database, "oddbody@example.com", `wrong ${i}`, {
        peer: `2001:db8:2:${(300 + i).toString(16)}::1`,
      });
      expect(wrong.status).toBe(401);
    }
    const held = await odd(
      JSON.stringify({ email: " OddBody@example.com ", password: PASSWORD }),
      "Application/JSON; charset=utf-8",
      40,
    );
    expect(held.status).toBe(429);
  });

  it("limits turns per user", async () => {
    const database = use();
    const browser = anonymous();
    await signIn(database, "elsewhere@example.com", PASSWORD, { peer: "192.0.2.50", browser });
    const chatId = await newChat(database, browser);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const { response } = await sendTurn(database, browser, {
        chatId,
        modelId: "demo:demo",
        text: `hello ${i}`,
        id: `u-${i}`,
      });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([200, 200, 429]);
    // The refused turn saved nothing, and took no message from the day (asked at once, the
    // quota gave its message back).
    expect((await loadHistory(database.db, chatId)).map((m) => m.id)).not.toContain("u-2");
    const userId = (await sessionOf(database, browser))?.user.id ?? "";
    expect((await usageOn(database.db, userId, usageDayOf(new Date()))).messages).toBe(2);
  });

  it("gives back the turn point of a turn the database failed to admit: sent again, it is not refused", async () => {
    const database = use();
    const browser = anonymous();
    expect(
      (await signUp(database, "admit-failed@example.com", { peer: "192.0.2.70", browser })).status,
    ).toBe(200);
    const chatId = await newChat(database, browser);
    const turn = (i: number) =>
      sendTurn(database, browser, {
        chatId,
        modelId: "demo:demo",
        text: `hello ${i}`,
        id: `f-${i}`,
      }).then(({ response }) => response.status);
    quotaStatement.failNext = true;
    expect(await turn(0)).toBe(503);
    // Two points a minute: both are still there.
    expect(await turn(1)).toBe(200);
    expect(await turn(2)).toBe(200);
    expect(await turn(3)).toBe(429);
  });

  it("gives back the turn point a signed-out session's cookies spent before their 401", async () => {
    const database = use();
    const first = anonymous();
    const second = anonymous();
    expect(
      (await signUp(database, "refund@example.com", { peer: "192.0.2.60", browser: first })).status,
    ).toBe(200);
    await signIn(database, "refund@example.com", PASSWORD, { peer: "192.0.2.61", browser: second });
    const chatId = await newChat(database, first);
    const turn = (browser: Browser, i: number) =>
      sendTurn(database, browser, {
        chatId,
        modelId: "demo:demo",
        text: `hello ${i}`,
        id: `r-${i}`,
      }).then(({ response }) => response.status);
    // The first session's cookies are verified by a turn, copied, then signed out.
    expect(await turn(first, 0)).toBe(200);
    const copy: Browser = { cookie: first.cookie };
    await authPost(database, "/api/auth/sign-out", {}, { peer: "192.0.2.60", browser: first });
    expect(await turn(copy, 1)).toBe(401);
    // The user's other session still has the second of their two points a minute.
    expect(await turn(second, 2)).toBe(200);
    expect(await turn(second, 3)).toBe(429);
  });

  it("a turn point given back after its minute ended is not a point more in the next minute", async () => {
    const database = use();
    const key = `window-${crypto.randomUUID()}`;
    const spend = () => withDatabase(database, () => consumeRateLimit("turn", key));
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(new Date("2026-11-28T10:00:00Z"));
      const spent = await spend();
      // The refused turn's point comes back within its minute: that minute has two again.
      const refused = await spend();
      await withDatabase(database, () => refused.refund());
      await spend();
      await expect(spend()).rejects.toBeInstanceOf(TooManyRequestsError);
      // Given back once its minute is over, it would be a third point in the next one.
      vi.setSystemTime(new Date("2026-11-28T10:01:01Z"));
      await withDatabase(database, () => spent.refund());
      await spend();
      await spend();
      await expect(spend()).rejects.toBeInstanceOf(TooManyRequestsError);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a point that cannot be given back stays spent, and the refund does not fail", async () => {
    const database = use();
    const spent = await withDatabase(database, () =>
      consumeRateLimit("turn", `refund-fails-${crypto.randomUUID()}`),
    );
    const reward = vi
      .spyOn(RateLimiterDrizzle.prototype, "reward")
      .mockRejectedValue(new Error("the database went away for a moment"));
    await expect(withDatabase(database, () => spent.refund())).resolves.toBeUndefined();
    expect(reward).toHaveBeenCalled();
    reward.mockRestore();
  });

  it("gives Compact now's point back when it is refused before summarizing (a reply is being written)", async () => {
    const database = use();
    const { browser, chatId } = await userWithChat(
      database,
      "compact-busy@example.com",
      "192.0.2.52",
    );
    const held = await acquireLease(database.db, chatId, 30_000);
    expect(held).not.toBeNull();
    for (let i = 0; i < 2; i++) {
      const busy = await compactNowCall(database, browser, chatId, { modelId: "demo:demo" });
      expect(busy.status).toBe(409);
    }
    if (held) await releaseLease(database.db, held);
    // Both points are still this minute's to spend.
    for (let i = 0; i < 2; i++) {
      const compacted = await compactNowCall(database, browser, chatId, { modelId: "demo:demo" });
      expect(compacted.status).toBe(200);
    }
  });

  it("gives Compact now's point back when the server fails before summarizing", async () => {
    const database = use();
    const { browser, chatId } = await userWithChat(
      database,
      "compact-fails@example.com",
      "192.0.2.58",
    );
    // A real failure before any summarizer runs: the database refuses the chat's lease.
    await database.db.execute(sql`create function refuse_lease() returns trigger
      language plpgsql as $$ begin raise exception 'the lease cannot be taken'; end $$`);
    await database.db.execute(
      sql.raw(`create trigger refuse_lease before update on chat
      for each row when (new.id = '${chatId}' and new.active_turn_until is not null)
      execute function refuse_lease()`),
    );
    try {
      for (let i = 0; i < 2; i++) {
        const failed = await compactNowCall(database, browser, chatId, { modelId: "demo:demo" });
        expect(failed.status).toBeGreaterThanOrEqual(500);
      }
    } finally {
      await database.db.execute(sql`drop trigger refuse_lease on chat`);
      await database.db.execute(sql`drop function refuse_lease()`);
    }
    // Both points are still this minute's to spend.
    for (let i = 0; i < 2; i++) {
      const compacted = await compactNowCall(database, browser, chatId, { modelId: "demo:demo" });
      expect(compacted.status).toBe(200);
    }
  });

  it("limits Compact now per user, apart from turns", async () => {
    const database = use();
    // A user of its own: the turns test spent this minute's turns of the other.
    const { browser, chatId } = await userWithChat(
      database,
      "compacting@example.com",
      "192.0.2.51",
    );
    for (let i = 0; i < 2; i++) {
      const compacted = await compactNowCall(database, browser, chatId, { modelId: "demo:demo" });
      expect(compacted.status).toBe(200);
    }
    const refused = await compactNowCall(database, browser, chatId, { modelId: "demo:demo" });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
      "too_many_requests:compact",
    );
    // Compacting spent its own points: a turn is still let through.
    const after = await sendTurn(database, browser, {
      chatId,
      modelId: "demo:demo",
      text: "still here",
    });
    expect(after.response.status).toBe(200);
  });

  it("limits Continue in a new chat per user, apart from turns: copying a chat again and again cannot fill the database", async () => {
    const database = use();
    const { browser, chatId } = await userWithChat(
      database,
      "continuing@example.com",
      "192.0.2.53",
    );
    // A refusal spends nothing: a chat with nothing summarized yet is a 409, its point given back.
    const first = await sendTurn(database, browser, { chatId, modelId: "demo:demo", text: "hi" });
    expect(first.response.status).toBe(200);
    for (let i = 0; i < 3; i++)
      expect((await continueCall(database, browser, chatId)).status).toBe(409);
    // A summary as a fold leaves one (folding takes more turns than this file's limit lets by).
    await database.db
      .update(chat)
      .set({ contextSummary: "The user greeted the assistant.", summaryWatermark: null })
      .where(eq(chat.id, chatId));
    for (let i = 0; i < 2; i++)
      expect((await continueCall(database, browser, chatId)).status).toBe(201);
    const refused = await continueCall(database, browser, chatId);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
      "too_many_requests:continue",
    );
    const chats = await call(database, chatsListRoute.GET, { path: "/api/chats", browser });
    expect(((await chats.json()) as { chats: unknown[] }).chats).toHaveLength(3);
    // Its points are its own: the minute's second turn is still let through.
    const after = await sendTurn(database, browser, { chatId, modelId: "demo:demo", text: "on" });
    expect(after.response.status).toBe(200);
  });

  it("a Continue that fails on the server's side spends no point: nothing was copied", async () => {
    const database = use();
    const { browser, chatId } = await userWithChat(
      database,
      "continue-fails@example.com",
      "192.0.2.57",
    );
    await database.db
      .update(chat)
      .set({ contextSummary: "The user greeted the assistant.", summaryWatermark: null })
      .where(eq(chat.id, chatId));
    // A real failure inside the copy's transaction: the database refuses the handoff's event.
    await database.db.execute(sql`create function refuse_handoff() returns trigger
      language plpgsql as $$ begin raise exception 'the handoff cannot be stored'; end $$`);
    await database.db.execute(sql`create trigger refuse_handoff before insert on compaction_event
      for each row when (new.reason = 'handoff') execute function refuse_handoff()`);
    try {
      for (let i = 0; i < 3; i++) {
        expect((await continueCall(database, browser, chatId)).status).toBeGreaterThanOrEqual(500);
      }
    } finally {
      await database.db.execute(sql`drop trigger refuse_handoff on compaction_event`);
      await database.db.execute(sql`drop function refuse_handoff()`);
    }
    const chats = await call(database, chatsListRoute.GET, { path: "/api/chats", browser });
    expect(((await chats.json()) as { chats: unknown[] }).chats).toHaveLength(1);
    // The minute's two points are all still there.
    for (let i = 0; i < 2; i++)
      expect((await continueCall(database, browser, chatId)).status).toBe(201);
    expect((await continueCall(database, browser, chatId)).status).toBe(429);
  });

  it("a new chat that fails on the server's side spends no point: nothing was created", async () => {
    const database = use();
    // The minute's first new chat.
    const { browser } = await userWithChat(database, "new-chat-fails@example.com", "198.51.100.55");
    const create = (title: string) =>
      call(database, chatsListRoute.POST, {
        path: "/api/chats",
        method: "POST",
        body: { title },
        browser,
      });
    await database.db.execute(sql`create function refuse_chat() returns trigger
      language plpgsql as $$ begin raise exception 'the chat cannot be stored'; end $$`);
    await database.db.execute(sql`create trigger refuse_chat before insert on chat
      for each row when (new.title = 'doomed') execute function refuse_chat()`);
    try {
      for (let i = 0; i < 3; i++)
        expect((await create("doomed")).status).toBeGreaterThanOrEqual(500);
    } finally {
      await database.db.execute(sql`drop trigger refuse_chat on chat`);
      await database.db.execute(sql`drop function refuse_chat()`);
    }
    // The minute's second point is still there.
    expect((await create("works")).status).toBe(201);
    expect((await create("one too many")).status).toBe(429);
  });

  it("new chats are rate limited per user; opening the unused one again takes nothing", async () => {
    const database = use();
    // The minute's first new chat.
    const { browser, chatId } = await userWithChat(
      database,
      "new-chats@example.com",
      "198.51.100.54",
    );
    const create = (body: Record<string, unknown>) =>
      call(database, chatsListRoute.POST, { path: "/api/chats", method: "POST", body, browser });
    // New chat again opens that unused chat, and a model the server does not have is refused:
    // neither is counted.
    const reopened = await create({ reuseUnused: true });
    expect(reopened.status).toBe(200);
    expect(((await reopened.json()) as { chat: { id: string } }).chat.id).toBe(chatId);
    expect((await create({ modelId: "nowhere:none" })).status).toBeGreaterThanOrEqual(400);
    expect((await create({ title: "second" })).status).toBe(201);
    const refused = await create({ title: "third" });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
      "too_many_requests:chat",
    );
    const chats = await call(database, chatsListRoute.GET, { path: "/api/chats", browser });
    expect(((await chats.json()) as { chats: unknown[] }).chats).toHaveLength(2);
  });
});
