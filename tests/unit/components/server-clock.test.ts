import { describe, expect, it } from "vitest";
import { createServerClock } from "@/components/server-clock";

/** A browser whose clock reads `skewMs` off the server's; `at` is the server's true time. */
function browser(skewMs: number) {
  let at = Date.parse("2026-12-06T10:00:00.000Z");
  const clock = createServerClock(() => at + skewMs);
  /** One answer: sent now, the server reading its clock `serverAfterMs` in, answered `roundTripMs` after sending. */
  const answer = (serverAfterMs: number, roundTripMs: number) => {
    const sentAt = at + skewMs;
    const serverMs = at + serverAfterMs;
    const date = new Date(Math.floor(serverMs / 1_000) * 1_000).toUTCString();
    at += roundTripMs;
    clock.note(date, sentAt, at + skewMs);
  };
  const wait = (ms: number) => {
    at += ms;
  };
  return { clock, answer, wait, serverNow: () => at };
}

describe("server clock", () => {
  it("is the browser's own clock until an answer says otherwise", () => {
    const b = browser(-600_000);
    expect(b.clock.now()).toBe(b.serverNow() - 600_000);
    b.clock.note(null, 0, 10);
    b.clock.note("not a date", 0, 10);
    expect(b.clock.now()).toBe(b.serverNow() - 600_000);
  });

  it("a browser ten minutes behind tells the server's time within a second from one answer", () => {
    const b = browser(-600_000);
    b.answer(20, 40);
    expect(Math.abs(b.clock.now() - b.serverNow())).toBeLessThanOrEqual(520);
  });

  it("answers landing at different points of a second narrow it towards the round trip", () => {
    const b = browser(123_456);
    b.answer(15, 30);
    const first = Math.abs(b.clock.now() - b.serverNow());
    for (let i = 0; i < 40; i++) {
      b.wait(17 + ((i * 37) % 101));
      b.answer(15, 30);
    }
    const last = Math.abs(b.clock.now() - b.serverNow());
    expect(last).toBeLessThan(first);
    expect(last).toBeLessThanOrEqual(60);
  });

  it("a browser clock set since counts from its next answer, not from bounds that no longer meet", () => {
    let skew = 0;
    let at = Date.parse("2026-12-06T10:00:00.250Z");
    const clock = createServerClock(() => at + skew);
    const date = () => new Date(Math.floor(at / 1_000) * 1_000).toUTCString();
    clock.note(date(), at + skew, at + skew + 20);
    skew = 3_600_000;
    at += 5_000;
    clock.note(date(), at + skew, at + skew + 20);
    expect(Math.abs(clock.now() - at)).toBeLessThanOrEqual(1_000);
  });
});
