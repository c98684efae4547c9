import { expect, it } from "vitest";
import { holdLease, tryHoldCompactionLease } from "@/lib/chat/lease";
import { acquireLease, releaseLease, renewLease } from "@/lib/db/queries/leases";
import { describeEachDriver } from "../../helpers/databases";
import { isCompactingNow, isTurnActive } from "../../helpers/db";
import { seedChat } from "../../helpers/fixtures";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeEachDriver("owned leases (one turn or compaction at a time, across instances)", (use) => {
  it("a held lease refuses a second holder until its owner releases it", async () => {
    const { db } = use();
    const { id } = await seedChat(db);
    const first = await acquireLease(db, id, 30_000);
    expect(first).not.toBeNull();
    expect(await acquireLease(db, id, 30_000)).toBeNull();
    expect(await releaseLease(db, first as NonNullable<typeof first>)).toBe(true);
    expect(await acquireLease(db, id, 30_000)).not.toBeNull();
  });

  it("a background compaction's lease is one per chat and apart from the turn's", async () => {
    const { db } = use();
    const { id } = await seedChat(db);
    const compacting = await tryHoldCompactionLease(db, id);
    expect(compacting).not.toBeNull();
    expect(await isCompactingNow(db, id)).toBe(true);
    // A second instance does not start another compaction, and does not wait for one.
    expect(await tryHoldCompactionLease(db, id)).toBeNull();
    // A turn still takes the chat meanwhile.
    const turn = await holdLease(db, id, "busy");
    expect(await isTurnActive(db, id)).toBe(true);
    await turn.release();
    await compacting?.release();
    expect(await isCompactingNow(db, id)).toBe(false);
    const again = await tryHoldCompactionLease(db, id);
    expect(again).not.toBeNull();
    await again?.release();
  });

  it("an expired holder can neither renew nor release the lease someone took since", async () => {
    const { db } = use();
    const { id } = await seedChat(db);
    const stale = await acquireLease(db, id, 50);
    if (!stale) throw new Error("no lease");
    await sleep(120);
    const current = await acquireLease(db, id, 30_000);
    expect(current).not.toBeNull();
    expect(await renewLease(db, stale, 30_000)).toBeNull();
    expect(await releaseLease(db, stale)).toBe(false);
    expect(await isTurnActive(db, id)).toBe(true);
    // The owner's renewal works and moves its token forward.
    const renewed = await renewLease(db, current as NonNullable<typeof current>, 30_000);
    expect(renewed).not.toBeNull();
    expect(await releaseLease(db, current as NonNullable<typeof current>)).toBe(false);
    expect(await releaseLease(db, renewed as NonNullable<typeof renewed>)).toBe(true);
  });

  it("waits for a turn that is finishing instead of answering 409 at once", async () => {
    const { db } = use();
    const { id } = await seedChat(db);
    const busy = await holdLease(db, id, "busy");
    setTimeout(() => void busy.release(), 300);
    const started = Date.now();
    const next = await holdLease(db, id, "busy");
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    await next.release();
    expect(await isTurnActive(db, id)).toBe(false);
  });

  it("answers 409 when the holder does not finish within the wait", async () => {
    const { db } = use();
    const { id } = await seedChat(db);
    const busy = await holdLease(db, id, "busy");
    try {
      await expect(holdLease(db, id, "still busy")).rejects.toMatchObject({
        code: "conflict:turn",
        message: "still busy",
      });
    } finally {
      await busy.release();
    }
  });
});
