import { expect, it } from "vitest";
import {
  casCompactionState,
  commitCompactionState,
  markCompactionDirty,
} from "@/lib/db/compaction-state";
import { appendMessage } from "@/lib/db/queries/messages";
import { describeEachDriver } from "../../helpers/databases";
import { seedChat } from "../../helpers/fixtures";

describeEachDriver("the one CAS writer", (use) => {
  it("a writer at the current version wins and bumps the version", async () => {
    const { db } = use();
    const seeded = await seedChat(db);
    const result = await casCompactionState(db, seeded.id, 0, {
      contextSummary: "S1",
      summaryWatermark: "m5",
      compactionDirty: false,
    });
    expect(result).toMatchObject({
      won: true,
      chat: { version: 1, contextSummary: "S1", summaryWatermark: "m5" },
    });
  });

  it("stores a summary and a reply that carry NUL or a lone surrogate, as U+FFFD", async () => {
    const { db } = use();
    const seeded = await seedChat(db);
    const nul = String.fromCharCode(0);
    const written = await casCompactionState(db, seeded.id, 0, {
      contextSummary: `## Artifacts & references\n- \`cd ${nul}${nul} && make\` \ud800`,
      summaryWatermark: "m1",
    });
    expect(written?.chat.contextSummary).toBe(
      "## Artifacts & references\n- `cd \uFFFD\uFFFD && make` \uFFFD",
    );
    const stored = await appendMessage(db, seeded.id, {
      id: "reply-with-nul",
      role: "assistant",
      parts: [{ type: "text", text: `binary${nul}output` }],
      metadata: null,
    });
    expect(stored.parts).toEqual([{ type: "text", text: "binary\uFFFDoutput" }]);
  });

  it("a stale version loses, writes nothing and gets the current row", async () => {
    const { db } = use();
    const seeded = await seedChat(db);
    await casCompactionState(db, seeded.id, 0, {
      contextSummary: "winner",
      summaryWatermark: "m9",
    });
    const stale = await casCompactionState(db, seeded.id, 0, {
      contextSummary: "loser",
      summaryWatermark: "m3",
    });
    expect(stale).toMatchObject({
      won: false,
      chat: { version: 1, contextSummary: "winner", summaryWatermark: "m9" },
    });
  });

  it("20 concurrent writers expecting one version: exactly one winner", async () => {
    const { db } = use();
    const seeded = await seedChat(db);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        casCompactionState(db, seeded.id, 0, {
          contextSummary: `writer ${i}`,
          summaryWatermark: `m${i}`,
        }),
      ),
    );
    const winners = results.filter((r) => r?.won);
    expect(winners).toHaveLength(1);
    const winner = winners[0]?.chat;
    for (const r of results) expect(r?.chat.version).toBe(1);
    for (const r of results) expect(r?.chat.contextSummary).toBe(winner?.contextSummary);
  });

  it("a loser whose work the winner covered skips without touching the row", async () => {
    const { db } = use();
    const seeded = await seedChat(db);
    await casCompactionState(db, seeded.id, 0, {
      contextSummary: "winner",
      summaryWatermark: "m9",
    });
    const outcome = await commitCompactionState(db, {
      chatId: seeded.id,
      expectedVersion: 0,
      patch: { contextSummary: "mine", summaryWatermark: "m7" },
      rebase: () => "covered",
    });
    expect(outcome).toMatchObject({
      status: "skipped",
      reason: "covered",
      chat: { version: 1, contextSummary: "winner" },
    });
  });

  it("a loser that is not covered retries once against the winner's row", async () => {
    const { db } = use();
    const seeded = await seedChat(db);
    await casCompactionState(db, seeded.id, 0, { compactionDirty: true });
    const outcome = await commitCompactionState(db, {
      chatId: seeded.id,
      expectedVersion: 0,
      patch: { contextSummary: "mine", summaryWatermark: "m7", compactionDirty: false },
      rebase: (current) => ({
        contextSummary: `mine over v${current.version}`,
        summaryWatermark: "m7",
        compactionDirty: false,
      }),
    });
    expect(outcome).toMatchObject({
      status: "written",
      chat: { version: 2, contextSummary: "mine over v1", compactionDirty: false },
    });
  });

  it("a second loss skips as a conflict and leaves the dirty flag set", async () => {
    const { db } = use();
    const seeded = await seedChat(db);
    await casCompactionState(db, seeded.id, 0, { compactionDirty: true });
    const outcome = await commitCompactionState(db, {
      chatId: seeded.id,
      expectedVersion: 0,
      patch: { contextSummary: "mine", compactionDirty: false },
      rebase: async () => {
        // A third writer wins between our re-read and our retry.
        await casCompactionState(db, seeded.id, 1, { contextSummary: "third party" });
        return { contextSummary: "mine", compactionDirty: false };
      },
    });
    expect(outcome).toMatchObject({
      status: "skipped",
      reason: "conflict",
      chat: { version: 2, contextSummary: "third party", compactionDirty: true },
    });
  });

  it("marking dirty survives a concurrent writer and is idempotent", async () => {
    const { db } = use();
    const seeded = await seedChat(db);
    const [marked, other] = await Promise.all([
      markCompactionDirty(db, seeded.id),
      casCompactionState(db, seeded.id, 0, { contextSummary: "S" }),
    ]);
    expect(marked?.compactionDirty).toBe(true);
    const settled = await casCompactionState(db, seeded.id, -1, {});
    // Whichever order they ran in, the flag is set and the other write is kept if it won.
    expect(settled?.chat.compactionDirty).toBe(true);
    expect(settled?.chat.contextSummary).toBe(other?.won ? "S" : null);
    const again = await markCompactionDirty(db, seeded.id);
    expect(again?.version).toBe(settled?.chat.version);
  });

  it("answers null for a chat that does not exist", async () => {
    const { db } = use();
    expect(await casCompactionState(db, "00000000-0000-4000-8000-000000000000", 0, {})).toBeNull();
  });
});
