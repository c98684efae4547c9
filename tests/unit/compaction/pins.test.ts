import { describe, expect, it } from "vitest";
import { runTier1 } from "@/lib/compaction/tier1";
import { summarizesNothing } from "@/lib/compaction/user-notes";
import { buildView, SUMMARY_MESSAGE_ID } from "@/lib/compaction/view";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import {
  assistantMessage,
  EMPTY_STATE,
  exchange,
  filler,
  isPlaceholderOutput,
  tier1Harness,
  userMessage,
} from "./histories";

/** Twelve exchanges of about 700 tokens each: well over the 8k budget's trigger. */
function longHistory(): FoldUIMessage[] {
  return Array.from({ length: 12 }, (_, n) =>
    exchange(n, { userTokens: 300, textTokens: 400 }),
  ).flat();
}

const textOf = (m: FoldUIMessage | undefined) =>
  (m?.parts ?? []).map((p) => (p.type === "text" ? p.text : "")).join("");

describe("Pinned messages (issue 14)", () => {
  it("a pinned message the fold covers is sent verbatim right after the summary, and not summarized", async () => {
    const history = longHistory();
    const pinnedMessage = history[2] as FoldUIMessage;
    const pinnedIds = new Set([pinnedMessage.id]);
    const { input, summarizer } = tier1Harness();

    const result = await runTier1(input(history, EMPTY_STATE, { force: true, pinnedIds }));

    expect(result.kind).toBe("compacted");
    if (result.kind !== "compacted") return;
    const covered = history.findIndex((m) => m.id === result.next.watermark);
    expect(covered).toBeGreaterThan(2);
    expect(result.view.messages[0]?.id).toBe(SUMMARY_MESSAGE_ID);
    expect(result.view.messages[1]).toEqual(pinnedMessage);
    const summarized = summarizer.calls.flatMap((c) => c.span.map((m) => m.id));
    expect(summarized).not.toContain(pinnedMessage.id);
    expect(summarized).toContain(history[0]?.id);

    // The next turn's view keeps it too, whatever the summary says.
    const view = buildView({
      history,
      state: result.next,
      rules: { bulkyToolTokens: 256, keepRecentToolResults: 2 },
      limitTokens: 100_000,
      estimator: tier1Harness().estimator,
      pinnedIds,
    });
    expect(view.messages.filter((m) => m.id === pinnedMessage.id)).toEqual([pinnedMessage]);
    // Without the pin, the same state folds it away.
    const unpinned = buildView({
      history,
      state: result.next,
      rules: { bulkyToolTokens: 256, keepRecentToolResults: 2 },
      limitTokens: 100_000,
      estimator: tier1Harness().estimator,
    });
    expect(unpinned.messages.some((m) => m.id === pinnedMessage.id)).toBe(false);
  });

  it("a message unpinned after the summary covered it is told by the next fold, and only then leaves the view", async () => {
    const history = longHistory();
    const { input, summarizer } = tier1Harness();
    const kept = history[2] as FoldUIMessage;
    const first = await runTier1(
      input(history, EMPTY_STATE, { force: true, pinnedIds: new Set([kept.id]) }),
    );
    if (first.kind !== "compacted") throw new Error("the first fold did not compact");
    const state = { ...EMPTY_STATE, ...first.next };

    // Unpinned: stored as pinned and pending its fold (lib/chat/memory.ts).
    const unpinned = history.map((m) =>
      m.id === kept.id ? { ...m, metadata: { pinned: true, foldPending: true } } : m,
    );
    const pinnedIds = new Set([kept.id]);
    summarizer.calls.length = 0;
    const second = await runTier1(input(unpinned, state, { force: true, pinnedIds }));

    expect(second.kind).toBe("compacted");
    if (second.kind !== "compacted") return;
    const told = summarizer.calls.flatMap((c) => c.span.map((m) => m.id));
    expect(told[0]).toBe(kept.id);
    expect(second.draft.foldedPendingIds).toEqual([kept.id]);
    expect(second.view.messages.some((m) => m.id === kept.id)).toBe(false);
  });

  it("a message unpinned after a fold passed it is cited by its own number, though a turn loads it ahead of the rest", async () => {
    const history = longHistory();
    const { input } = tier1Harness();
    // Message 3 holds a path the ledger keeps; pinned, the first fold passes over it.
    const kept = {
      ...(history[2] as FoldUIMessage),
      parts: [{ type: "text" as const, text: "The config lives at /srv/app/config.yaml." }],
    };
    const pinned = history.map((m) => (m.id === kept.id ? kept : m));
    const first = await runTier1(
      input(pinned, EMPTY_STATE, { force: true, pinnedIds: new Set([kept.id]) }),
    );
    if (first.kind !== "compacted") throw new Error("the first fold did not compact");
    const state = { ...EMPTY_STATE, ...first.next };
    // As a turn loads it now: the pinned message first, then the watermark message and on.
    const from = pinned.findIndex((m) => m.id === first.next.watermark);
    const loaded = [
      { ...kept, metadata: { pinned: true, foldPending: true } },
      ...pinned.slice(from),
    ];
    const positions = new Map(pinned.map((m, i) => [m.id, i + 1]));
    const second = await runTier1(
      input(loaded, state, {
        force: true,
        pinnedIds: new Set([kept.id]),
        positions,
      }),
    );
    if (second.kind !== "compacted") throw new Error("the second fold did not compact");
    expect(second.next.summary).toContain("/srv/app/config.yaml [3]");
  });

  it("a fold of pinned messages alone over a summary of the user's notes alone says so before the notes", async () => {
    const history = longHistory();
    const pinnedIds = new Set(history.map((m) => m.id));
    const { input, summarizer } = tier1Harness();
    const notes = "## Notes you added\n- Always answer in French.";
    const state = { ...EMPTY_STATE, summary: notes };

    const result = await runTier1(input(history, state, { force: true, pinnedIds }));

    expect(result.kind).toBe("compacted");
    if (result.kind !== "compacted") return;
    expect(summarizer.calls).toHaveLength(0);
    expect(result.next.watermark).not.toBeNull();
    // It covers messages now: no longer notes alone, and the notes stay as written.
    expect(summarizesNothing(result.next.summary)).toBe(false);
    expect(result.next.summary?.startsWith("(The messages before this point")).toBe(true);
    expect(result.next.summary?.endsWith(notes)).toBe(true);
  });

  it("a pinned reply's old tool results and arguments are sent whole; another reply's are placeholders", () => {
    const bulky = filler(1200, 3);
    const reply = (id: string, callId: string) =>
      assistantMessage(id, {
        tools: [{ name: "fetch_url", callId, input: { url: bulky }, output: bulky }],
        text: "Read it.",
      });
    const newer = Array.from({ length: 3 }, (_, n) => [
      userMessage(`u-new-${n}`, `Read page ${n}.`),
      reply(`a-new-${n}`, `call-new-${n}`),
    ]).flat();
    const history: FoldUIMessage[] = [
      userMessage("u-pinned", "Read the spec."),
      reply("a-pinned", "call-pinned"),
      userMessage("u-other", "Read the notes."),
      reply("a-other", "call-other"),
      ...newer,
      userMessage("u-last", "Compare them."),
    ];
    const view = buildView({
      history,
      state: { summary: null, watermark: null },
      rules: { bulkyToolTokens: 256, keepRecentToolResults: 2 },
      limitTokens: 100_000,
      estimator: tier1Harness().estimator,
      pinnedIds: new Set(["a-pinned"]),
    });
    const toolOf = (id: string) =>
      view.messages.find((m) => m.id === id)?.parts.find((p) => p.type === "tool-fetch_url") as
        | { input: { url: string }; output: unknown }
        | undefined;
    expect(toolOf("a-pinned")?.output).toBe(bulky);
    expect(toolOf("a-pinned")?.input.url).toBe(bulky);
    expect(isPlaceholderOutput(toolOf("a-other")?.output)).toBe(true);
    expect(toolOf("a-new-2")?.output).toBe(bulky);
  });

  it("the hard wall cuts other messages but never a pinned one", () => {
    const big = filler(3000, 1);
    const history: FoldUIMessage[] = [
      { id: "p", role: "user", parts: [{ type: "text", text: big }] },
      { id: "a", role: "assistant", parts: [{ type: "text", text: big }] },
      { id: "u", role: "user", parts: [{ type: "text", text: "latest" }] },
    ];
    const view = buildView({
      history,
      state: { summary: null, watermark: null },
      rules: { bulkyToolTokens: 256, keepRecentToolResults: 2 },
      limitTokens: 4000,
      estimator: tier1Harness().estimator,
      pinnedIds: new Set(["p"]),
    });
    expect(view.fits).toBe(true);
    expect(textOf(view.messages[0])).toBe(big);
    expect(textOf(view.messages[1]).length).toBeLessThan(big.length);
  });
});
