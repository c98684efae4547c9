import { describe, expect, it } from "vitest";
import { cutInViewOf, RECALL_EXCERPT_CHARS, rankMatches, recallTerms } from "@/lib/chat/recall";
import type { MatchedRow } from "@/lib/db/queries/recall";
import { COMPACTION_TRACE_TOOL_NAME, type FoldUIMessage } from "@/lib/message/ui-message";

/** A candidate as the database hands it over: its parts, and the text it searched in them. */
const row = (
  seq: number,
  role: MatchedRow["role"],
  parts: unknown[],
  searched: string,
): MatchedRow => ({ id: `m${seq}`, seq, role, parts, searched });
const said = (seq: number, text: string) => row(seq, "user", [{ type: "text", text }], text);

describe("recallTerms", () => {
  it("looks for the whole query and each word of it, an identifier kept whole", () => {
    expect(recallTerms("  Where is /srv/runbooks/cutover.md, again? ")).toEqual({
      phrase: "where is /srv/runbooks/cutover.md, again?",
      terms: [
        "where is /srv/runbooks/cutover.md, again?",
        "where",
        "srv/runbooks/cutover.md",
        "again",
      ],
    });
  });

  it("drops words too short to mean anything, but keeps a short query whole", () => {
    expect(recallTerms("is it on").terms).toEqual(["is it on"]);
    expect(recallTerms("部署密钥").terms).toEqual(["部署密钥"]);
  });
});

describe("rankMatches", () => {
  it("puts the message holding the query as written first, then by words found, newer first on ties", () => {
    const rows = [
      said(9, "The harbor ledger was moved."),
      said(7, "We moved the ledger to the harbor office."),
      said(5, "The harbor ledger, again."),
      said(3, "Only the ledger here."),
      said(1, "Nothing relevant at all."),
    ];
    expect(rankMatches(rows, "harbor ledger").map((m) => m.message)).toEqual([10, 6, 8, 4]);
  });

  it("scores the text the database searched, and quotes the message as the model reads it", () => {
    const rows = [
      row(
        4,
        "assistant",
        [
          {
            type: "tool-fetch_url",
            toolCallId: "call-output-available",
            state: "output-available",
            input: { url: "https://example.com/a?rev=77aa" },
            output: { text: "build 4411 passed" },
          },
        ],
        "fetch_url\nhttps://example.com/a?rev=77aa\nbuild 4411 passed",
      ),
    ];
    expect(rankMatches(rows, "rev=77aa")[0]?.excerpt).toContain(
      '<tool-call name="fetch_url">{"url":"https://example.com/a?rev=77aa"}</tool-call>',
    );
    expect(rankMatches(rows, "build 4411")).toHaveLength(1);
    // What only the JSON or the quoting around the words holds is no match.
    expect(rankMatches(rows, "output-available")).toEqual([]);
    expect(rankMatches(rows, "tool-result")).toEqual([]);
  });

  it("quotes the match with its lead-in, marked where the message goes on", () => {
    const before = "a".repeat(1_000);
    const after = "b".repeat(1_000);
    const [match] = rankMatches([said(0, `${before} KEY-42 ${after}`)], "KEY-42");
    expect(match?.excerpt.startsWith("…")).toBe(true);
    expect(match?.excerpt.endsWith("…")).toBe(true);
    expect(match?.excerpt).toContain("KEY-42");
    expect(match?.excerpt.length).toBeLessThanOrEqual(RECALL_EXCERPT_CHARS + 2);
  });

  it("never cuts an excerpt inside the tags the model reads a message in", () => {
    for (let lead = 185; lead <= 205; lead++) {
      for (let tail = 370; tail <= 420; tail += 2) {
        const text = `${"a ".repeat(lead / 2)}${lead % 2 ? "a" : ""}KEY-42${" b".repeat(tail / 2)}`;
        const whole = `<user>\n${text}\n</user>`;
        const [match] = rankMatches([said(0, text)], "KEY-42");
        const quoted = match?.excerpt.replace(/^…/, "").replace(/…$/, "") ?? "";
        const from = whole.indexOf(quoted);
        const to = from + quoted.length;
        expect(from, `lead ${lead}, tail ${tail}`).toBeGreaterThanOrEqual(0);
        for (const [open, close] of [
          [0, "<user>".length],
          [whole.length - "</user>".length, whole.length],
        ]) {
          const inside = (at: number) => at > (open ?? 0) && at < (close ?? 0);
          expect(inside(from) || inside(to), `lead ${lead}, tail ${tail}: ${quoted}`).toBe(false);
        }
        expect(quoted).toContain("KEY-42");
      }
    }
  });

  it("never cuts an excerpt inside a character of two UTF-16 units", () => {
    const emoji = "🙂".repeat(1_000);
    for (const lead of ["", "x"]) {
      const [match] = rankMatches([said(0, `${lead}${emoji} KEY-42 ${emoji}`)], "KEY-42");
      const quoted = match?.excerpt.replaceAll("…", "") ?? "";
      expect(quoted.isWellFormed()).toBe(true);
      expect(quoted).toContain("KEY-42");
    }
  });

  it("centers the excerpt on the match after many dotted capital İ (one unit folded to one)", () => {
    const lead = "İ".repeat(700);
    const [match] = rankMatches([said(0, `${lead} KEY-42 ${"b".repeat(1_000)}`)], "key-42");
    expect(match?.excerpt).toContain("KEY-42");
  });

  it("keeps at most the limit", () => {
    const rows = Array.from({ length: 12 }, (_, i) => said(i, `ledger ${i}`));
    expect(rankMatches(rows, "ledger", 5).map((m) => m.message)).toEqual([12, 11, 10, 9, 8]);
  });
});

describe("cutInViewOf", () => {
  const page = (id: string, output: string) => ({
    type: "tool-fetch_url",
    toolCallId: id,
    state: "output-available",
    input: { url: `https://example.com/${id}` },
    output,
  });
  const trace = {
    type: `tool-${COMPACTION_TRACE_TOOL_NAME}`,
    toolCallId: "trace-1",
    state: "output-available",
    input: {},
    output: { outcome: "summarized" },
  };
  const message = (id: string, parts: unknown[]) =>
    ({ id, role: "assistant", parts }) as unknown as FoldUIMessage;

  it("names the messages whose parts the view changed, not those it sent as stored", () => {
    const kept = message("kept", [page("a", "whole page")]);
    const cut = message("cut", [page("b", "a long page")]);
    const withTrace = message("traced", [trace, { type: "text", text: "done" }]);
    const history = [kept, cut, withTrace];
    const view = [
      kept,
      message("cut", [page("b", "[tool result for fetch_url omitted: 11 chars]")]),
      // The view drops the timeline's trace: the model never had it, nothing of its own is cut.
      message("traced", [withTrace.parts[1]]),
    ];
    expect([...cutInViewOf(history, view)]).toEqual(["cut"]);
  });
});
