import { afterEach, beforeEach, expect, it, vi } from "vitest";
import type { Db } from "@/lib/db/client";
import type { Lease } from "@/lib/db/queries/leases";

// The lease queries, held in hand: a renewal answers when the test says so.
const queries = vi.hoisted(() => ({
  renewLease: vi.fn(),
  releaseLease: vi.fn(async () => true),
  acquireLease: vi.fn(),
}));
vi.mock("@/lib/db/queries/leases", () => queries);

const { keepRenewing } = await import("@/lib/chat/lease");

const db = {} as Db;
const lease = (ms: number): Lease => ({ chatId: "c1", until: new Date(ms), kind: "turn" });

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
  queries.renewLease.mockReset();
  queries.releaseLease.mockClear();
});
afterEach(() => vi.useRealTimers());

/**
 * A lease held, its renewals answered when the test calls `answer` (each the renewal on its way
 * then), and its first renewal sent.
 */
function renewingByHand() {
  let answer: (next: Lease | null) => void = () => {};
  queries.renewLease.mockImplementation(
    () => new Promise<Lease | null>((resolve) => (answer = resolve)),
  );
  const held = keepRenewing(db, lease(1));
  vi.advanceTimersByTime(10_000);
  expect(queries.renewLease).toHaveBeenCalledTimes(1);
  return { held, answer: (next: Lease | null) => answer(next) };
}

it("a release during a renewal frees the token the renewal wrote, not the one it replaced", async () => {
  const { held, answer } = renewingByHand();

  const released = held.release();
  answer(lease(2));
  await released;
  expect(queries.releaseLease).toHaveBeenCalledTimes(1);
  expect(queries.releaseLease).toHaveBeenCalledWith(db, lease(2));
});

it("renews with the newest token, one renewal at a time, and stops once released", async () => {
  const { held, answer } = renewingByHand();
  // A slow renewal: the next tick does not send a second one beside it.
  vi.advanceTimersByTime(10_000);
  expect(queries.renewLease).toHaveBeenCalledTimes(1);
  answer(lease(2));
  await vi.waitFor(() => {
    vi.advanceTimersByTime(10_000);
    expect(queries.renewLease).toHaveBeenCalledTimes(2);
  });
  expect(queries.renewLease).toHaveBeenLastCalledWith(db, lease(2), 30_000);
  answer(lease(3));
  await held.release();
  expect(queries.releaseLease).toHaveBeenCalledWith(db, lease(3));
  vi.advanceTimersByTime(30_000);
  expect(queries.renewLease).toHaveBeenCalledTimes(2);
});

it("says when a renewal finds the lease another holder's, and stops renewing", async () => {
  queries.renewLease.mockResolvedValue(null);
  const held = keepRenewing(db, lease(1));
  expect(held.lost.aborted).toBe(false);
  vi.advanceTimersByTime(10_000);
  await vi.waitFor(() => expect(held.lost.aborted).toBe(true));
  vi.advanceTimersByTime(30_000);
  expect(queries.renewLease).toHaveBeenCalledTimes(1);
  await held.release();
  expect(queries.releaseLease).not.toHaveBeenCalled();
});

it("is not lost while renewals succeed or fail for a moment", async () => {
  queries.renewLease.mockRejectedValueOnce(new Error("connection reset"));
  queries.renewLease.mockResolvedValue(lease(2));
  const held = keepRenewing(db, lease(1));
  vi.advanceTimersByTime(10_000);
  await vi.waitFor(() => expect(queries.renewLease).toHaveBeenCalledTimes(1));
  await vi.waitFor(() => {
    vi.advanceTimersByTime(10_000);
    expect(queries.renewLease).toHaveBeenCalledTimes(2);
  });
  expect(held.lost.aborted).toBe(false);
  await held.release();
});

/** The lease's clock and its renewal timer moved on together. */
function clockedLease() {
  let clock = 0;
  const held = keepRenewing(db, lease(1), () => clock);
  const advance = async (ms: number) => {
    clock += ms;
    vi.advanceTimersByTime(ms);
    // Let a renewal's answer (or failure) settle.
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { held, advance };
}

it("is lost when renewals keep failing, a renewal period before the lease runs out", async () => {
  queries.renewLease.mockRejectedValue(new Error("database unreachable"));
  const { held, advance } = clockedLease();
  await advance(10_000);
  expect(held.lost.aborted).toBe(false);
  // Twenty seconds in, ten left of thirty: another failure and the next try would come too late.
  await advance(10_000);
  expect(queries.renewLease).toHaveBeenCalledTimes(2);
  expect(held.lost.aborted).toBe(true);
  await advance(30_000);
  expect(queries.renewLease).toHaveBeenCalledTimes(2);
});

it("is lost when a renewal never answers, and a release then waits for it only so long", async () => {
  vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "setTimeout", "clearTimeout"] });
  queries.renewLease.mockImplementation(() => new Promise<Lease | null>(() => {}));
  const { held, advance } = clockedLease();
  await advance(10_000);
  expect(held.lost.aborted).toBe(false);
  await advance(10_000);
  expect(queries.renewLease).toHaveBeenCalledTimes(1);
  expect(held.lost.aborted).toBe(true);
  let done = false;
  const released = held.release().then(() => {
    done = true;
  });
  await advance(9_000);
  expect(done).toBe(false);
  await advance(1_000);
  await released;
  expect(queries.releaseLease).toHaveBeenCalledWith(db, lease(1));
});

it("writes as the holder with the newest token, and no renewal replaces it during the write", async () => {
  const { held, answer } = renewingByHand();

  // A renewal on its way: the write waits for the token it brings.
  let finishWrite: () => void = () => {};
  const tokens: Lease[] = [];
  const wrote = held.asHolder(async (token) => {
    tokens.push(token);
    await new Promise<void>((resolve) => (finishWrite = resolve));
    return "stored";
  });
  await Promise.resolve();
  expect(tokens).toEqual([]);
  answer(lease(2));
  await vi.waitFor(() => expect(tokens).toEqual([lease(2)]));

  // Renewal ticks while the write runs send nothing: the token it uses stays on the row.
  vi.advanceTimersByTime(20_000);
  expect(queries.renewLease).toHaveBeenCalledTimes(1);
  finishWrite();
  expect(await wrote).toBe("stored");
  vi.advanceTimersByTime(10_000);
  expect(queries.renewLease).toHaveBeenCalledTimes(2);
  answer(lease(3));
  await held.release();
  // Released, nothing more is written as its holder.
  expect(await held.asHolder(async () => "late")).toBeNull();
});

it("writes nothing as the holder once the lease is lost", async () => {
  queries.renewLease.mockResolvedValue(null);
  const held = keepRenewing(db, lease(1));
  vi.advanceTimersByTime(10_000);
  await vi.waitFor(() => expect(held.lost.aborted).toBe(true));
  const write = vi.fn(async () => "stored");
  expect(await held.asHolder(write)).toBeNull();
  expect(write).not.toHaveBeenCalled();
});
