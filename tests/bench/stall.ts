import type { Benchmark, Figures } from "./benchmark";

/**
 * `stall`: the longest the server's one thread is held by a single crafted input of a size Fold
 * accepts — a message, a summary edit, a page the model fetches — built so a parser or a pattern
 * takes the square of its length (a run without a break, a chain that every pattern start runs
 * to its end, stray end tags). Each goes through the product's own function for that input, on
 * a fresh estimator where counting is involved. Target: each well under a second.
 */

type Crafted = { name: string; run: () => unknown };

async function craftedInputs(): Promise<Crafted[]> {
  const { MESSAGE_MAX_CHARS } = await import("@/lib/message/limits");
  const { SUMMARY_MAX_CHARS } = await import("@/lib/chat/schemas");
  const { createEstimator } = await import("@/lib/context/tokens");
  const { extractIdentifiers } = await import("@/lib/compaction/identifiers");
  const { splitSummary } = await import("@/lib/compaction/ledger");
  const { headingOf } = await import("@/lib/compaction/prompts");
  const { render } = await import("@/lib/ai/tools/readable-body");
  const message = (text: string) => [
    { id: "m", role: "user" as const, parts: [{ type: "text" as const, text }] },
  ];
  const fill = (unit: string, chars: number) => unit.repeat(Math.floor(chars / unit.length));
  const page = (html: string) => () => render(html, "html", "https://example.com/");
  const PAGE_CHARS = 2_000_000;
  return [
    {
      name: "count_cjk_run",
      run: () => createEstimator().countText(fill("漢", MESSAGE_MAX_CHARS)),
    },
    {
      name: "count_space_run",
      run: () => createEstimator().countText(fill(" ", MESSAGE_MAX_CHARS)),
    },
    {
      name: "count_letter_run",
      run: () => createEstimator().countText(fill("a", MESSAGE_MAX_CHARS)),
    },
    {
      name: "identifiers_csv_row",
      run: () => extractIdentifiers(message(fill("1,", MESSAGE_MAX_CHARS))),
    },
    {
      name: "identifiers_dotted",
      run: () => extractIdentifiers(message(fill("a.", MESSAGE_MAX_CHARS))),
    },
    {
      name: "summary_spaced_entry",
      run: () => splitSummary(`## Verbatim references\n- a${" ".repeat(SUMMARY_MAX_CHARS - 100)}b`),
    },
    {
      name: "summary_spaced_heading",
      run: () => headingOf(`## Goal${" ".repeat(SUMMARY_MAX_CHARS - 100)}x`),
    },
    { name: "page_stray_end_tags", run: page(fill("a</p>", PAGE_CHARS)) },
    { name: "page_slashed_attributes", run: page(`<p${fill("/a", PAGE_CHARS)}>x</p>`) },
    { name: "page_packed_attributes", run: page(`<p ${fill('a=""', PAGE_CHARS)}>x</p>`) },
  ];
}

export const benchmark: Benchmark = {
  name: "stall",
  async run(context) {
    const figures: Figures = {};
    let worst = 0;
    let worstName = "";
    for (const input of await craftedInputs()) {
      // Once untimed: a server has run its parsers and patterns before (compiled, warm).
      input.run();
      const started = performance.now();
      input.run();
      const ms = Math.round(performance.now() - started);
      figures[`stall.${input.name}_ms`] = ms;
      if (ms > worst) {
        worst = ms;
        worstName = input.name;
      }
    }
    figures["stall.max_ms"] = worst;
    context.note(
      "stall.max_ms",
      `the slowest of ${Object.keys(figures).length - 1} crafted inputs (${worstName}); each a message of ${"100,000"} characters, a summary edit of 60,000 or a fetched page of 2 MB, through the product's own function, timed on its second run (target < 1,000)`,
    );
    return figures;
  },
};
