import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { duration, turnDeadline } from "@/lib/turn/deadline";

/**
 * A turn's deadlines: a request not answered at all within the first-token time, a model that
 * began and then went quiet for the idle time, and the whole call's maximum.
 */

const LIMITS = { idleMs: 1_000, firstTokenMs: 10_000, maxMs: 60_000 };

describe("turn deadlines", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("gives a request the first-token time before its answer begins, not the idle time", () => {
    const deadline = turnDeadline(LIMITS);
    vi.advanceTimersByTime(9_000);
    expect(deadline.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1_001);
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.failure()?.message).toMatch(/did not begin answering within 10 s/);
    deadline.dispose();
  });

  it("stops a model that began answering and then sent nothing for the idle time", () => {
    const deadline = turnDeadline(LIMITS);
    vi.advanceTimersByTime(5_000);
    deadline.touch();
    vi.advanceTimersByTime(900);
    deadline.touch();
    vi.advanceTimersByTime(999);
    expect(deadline.signal.aborted).toBe(false);
    vi.advanceTimersByTime(2);
    expect(deadline.failure()?.message).toMatch(/stopped responding \(nothing for 1 s\)/);
    deadline.dispose();
  });

  it("waits the first-token time again for the next request of a tool loop", () => {
    const deadline = turnDeadline(LIMITS);
    deadline.touch();
    // The step ended: its tools ran, the next request went out.
    deadline.touch(true);
    vi.advanceTimersByTime(9_999);
    expect(deadline.signal.aborted).toBe(false);
    deadline.touch();
    vi.advanceTimersByTime(1_001);
    expect(deadline.failure()?.message).toMatch(/stopped responding/);
    deadline.dispose();
  });

  it("stops the call at its maximum however busy it is", () => {
    const deadline = turnDeadline(LIMITS);
    for (let ms = 0; ms < 60_000; ms += 500) {
      deadline.touch();
      vi.advanceTimersByTime(500);
    }
    expect(deadline.failure()?.message).toMatch(/took longer than 60 s/);
    deadline.dispose();
  });

  it('says a deadline under a second in milliseconds, not "0 s", and a long one in minutes', () => {
    const deadline = turnDeadline({ idleMs: 300, firstTokenMs: 10_000, maxMs: 60_000 });
    deadline.touch();
    vi.advanceTimersByTime(301);
    expect(deadline.failure()?.message).toMatch(/nothing for 300 ms\)/);
    deadline.dispose();
    expect([1_500, 60_000, 119_000, 300_000, 900_000, 150_000].map(duration)).toEqual([
      "1.5 s",
      "60 s",
      "119 s",
      "5 min",
      "15 min",
      "2.5 min",
    ]);
  });
});
