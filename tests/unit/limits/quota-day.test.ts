import { describe, expect, it } from "vitest";
import { formatWait, quotaResetAt, usageDayOf } from "@/lib/limits/quota-day";

describe("the quota day", () => {
  it("is the UTC date, and resets at the next UTC midnight", () => {
    const lateEvening = new Date("2026-03-31T23:59:30.000Z");
    expect(usageDayOf(lateEvening)).toBe("2026-03-31");
    expect(quotaResetAt(lateEvening).toISOString()).toBe("2026-04-01T00:00:00.000Z");
    const midnight = new Date("2026-04-01T00:00:00.000Z");
    expect(usageDayOf(midnight)).toBe("2026-04-01");
    expect(quotaResetAt(midnight).toISOString()).toBe("2026-04-02T00:00:00.000Z");
  });

  it("says how long until the reset in hours and minutes", () => {
    const now = new Date("2026-04-01T20:47:10.000Z");
    expect(formatWait(now, quotaResetAt(now))).toBe("3 h 13 min");
    expect(formatWait(now, new Date("2026-04-01T21:47:10.000Z"))).toBe("1 h");
    expect(formatWait(now, new Date("2026-04-01T21:02:10.000Z"))).toBe("15 min");
    expect(formatWait(now, new Date("2026-04-01T20:47:40.000Z"))).toBe("under a minute");
  });
});
