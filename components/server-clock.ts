/**
 * The server's clock as this browser can tell it, for the times the browser stamps and the
 * server compares (a model pick's `pickedAt`): two devices of one user whose clocks disagree
 * would otherwise order their picks by which clock is ahead, not by which came later.
 *
 * Every answer of Fold's carries a `Date` header, the server's clock in whole seconds, read
 * between the request going and the answer coming. Each answer so bounds the server's clock
 * less this browser's; the bounds of the answers seen narrow (answers land at different points
 * of a second) to within the shortest round trip. Bounds that no longer meet say this browser's
 * clock was set since: the latest answer alone counts from then on.
 */
export type ServerClock = {
  /**
   * Learns from one answer: its `Date` header and, on this browser's clock, when the request
   * went and when the answer came.
   */
  note(date: string | null, sentAt: number, receivedAt: number): void;
  /** The server's time now, as ms since the epoch (this browser's own until an answer says). */
  now(): number;
};

const SECOND_MS = 1_000;

export function createServerClock(browserNow: () => number = Date.now): ServerClock {
  let bounds: { low: number; high: number } | null = null;
  return {
    note(date, sentAt, receivedAt) {
      const second = date === null ? Number.NaN : Date.parse(date);
      if (Number.isNaN(second) || receivedAt < sentAt) return;
      const low = second - receivedAt;
      const high = second + SECOND_MS - sentAt;
      bounds =
        bounds && low <= bounds.high && high >= bounds.low
          ? { low: Math.max(low, bounds.low), high: Math.min(high, bounds.high) }
          : { low, high };
    },
    now() {
      const offset = bounds ? (bounds.low + bounds.high) / 2 : 0;
      return Math.round(browserNow() + offset);
    },
  };
}

/** This page's: fed by every answer of apiFetch (components/outage/api-fetch.ts). */
export const serverClock = createServerClock();
