// `npx tsx tests/bench/estimator-priors.ts`: where the cold class priors in
// lib/context/calibration.ts come from. Text of one class at a time — probes of our own
// (estimator-probes.ts), apart from the estimator benchmark's conversations — counted by o200k
// (Fold's raw count) and by each family's real tokenizer; a class's cold prior is the highest ratio any family
// shows on any one probe (a conversation may be all Arabic), so that a first turn
// over-estimates whichever family and language it meets.
import {
  CONTENT_CLASSES,
  type ContentClass,
  classSegments,
  type DigitGroupClass,
  isMeasuredClass,
  MEASURED_CLASSES,
} from "@/lib/context/content-class";
import { REQUEST_OVERHEAD_TOKENS, SYSTEM_OVERHEAD_TOKENS } from "@/lib/context/overhead";
import { createEstimator } from "@/lib/context/tokens";
import {
  familyPromptText,
  loadFamilyTokenizer,
  TOKENIZER_FAMILIES,
} from "../fixtures/fake-openai/family-tokens";
import { digitGroupProbes, PROBES } from "./estimator-probes";

/** Chat framing: a conversation of short messages, less the tokens of their text alone. */
const FRAME_MESSAGES = 8;

/** Tool calls of our own: a family's price of a call is what adding these to a turn costs it. */
const PROBE_CALLS = [
  { name: "get_weather", arguments: { city: "Lyon", unit: "celsius" } },
  { name: "search_notes", arguments: { query: "quarterly budget review", limit: 5 } },
  { name: "read_file", arguments: { path: "/srv/app/config/settings.yaml" } },
  {
    name: "send_message",
    arguments: { to: "ops-team", text: "Deploy finished, all checks green." },
  },
];

/** A user turn and an assistant turn that makes these calls (wire format). */
function callTurn(calls: typeof PROBE_CALLS) {
  return [
    { role: "user" as const, content: "ok" },
    {
      role: "assistant" as const,
      content: "ok",
      tool_calls: calls.map((call, i) => ({
        id: `call_${i}`,
        type: "function" as const,
        function: { name: call.name, arguments: JSON.stringify(call.arguments) },
      })),
    },
  ];
}

type Probe = { hint: "text" | "tool"; texts: string[] };

/** Each family's tokens per o200k token on a class: over all its probes, and on its worst probe. */
type FamilyRatios = { typical: Record<string, number>; highest: Record<string, number> };

async function main(): Promise<void> {
  const estimator = createEstimator();
  /** o200k tokens of each probe in its class. */
  const o200k = new Map<string, number>();
  /** The second count (letters, code's tabs) of each probe of a measured class. */
  const counts = new Map<string, number>();
  const probes: [ContentClass, Probe][] = Object.entries(PROBES) as [ContentClass, Probe][];
  for (const [cls, probe] of probes) {
    for (const text of probe.texts) {
      const units =
        probe.hint === "tool"
          ? [{ type: "tool-result" as const, toolName: "probe", output: text }]
          : [{ type: "text" as const, text }];
      const tokens = estimator.classTokens([{ units, wireMessages: 0 }]);
      o200k.set(text, tokens[cls]);
      // Counted afresh: the estimator holds a segment's count within these probes' own range.
      if (isMeasuredClass(cls)) {
        counts.set(text, sum(classSegments(text, probe.hint).map((s) => s.units)));
      }
      const stray = CONTENT_CLASSES.filter((c) => c !== cls && c !== "frame" && tokens[c] > 0);
      if (stray.length > 0) console.warn(`probe for ${cls} also holds ${stray.join(", ")}`);
    }
  }
  // A digit group is one o200k token.
  for (const [cls, groups] of Object.entries(digitGroupProbes()) as [DigitGroupClass, string[]][]) {
    probes.push([cls, { hint: "text", texts: groups }]);
    for (const group of groups) o200k.set(group, 1);
  }
  const messages = Array.from({ length: FRAME_MESSAGES }, (_, i) => ({
    role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
    content: "ok",
  }));
  const frameRaw = estimator.classTokensOfModelMessages(messages).frame;
  const callRaw = estimator.classTokens([
    {
      units: PROBE_CALLS.slice(1).map((call) => ({
        type: "tool-call" as const,
        toolName: call.name,
        input: JSON.stringify(call.arguments),
      })),
      wireMessages: 0,
    },
  ]).call;
  const ratios: Record<string, FamilyRatios> = {};
  /** Per measured class: its probes' mean count per o200k token, the density its ratio is read at. */
  const density: Record<string, number> = {};
  const densityRange: Record<string, [number, number]> = {};
  for (const [cls, probe] of probes) {
    if (!isMeasuredClass(cls)) continue;
    const each = probe.texts.map((t) => (counts.get(t) ?? 0) / (o200k.get(t) ?? 1));
    density[cls] = mean(each);
    densityRange[cls] = [Math.min(...each), Math.max(...each)];
  }
  /** Per family and measured class: the change in its ratio per unit more an o200k token holds. */
  const perUnit: Record<string, Record<string, number>> = {};
  for (const family of TOKENIZER_FAMILIES) {
    const tokenizer = await loadFamilyTokenizer(family);
    const count = (text: string) => tokenizer.encode(text, { add_special_tokens: false }).length;
    const row: FamilyRatios = { typical: {}, highest: {} };
    perUnit[family] = {};
    for (const [cls, probe] of probes) {
      const own = probe.texts.map(count);
      const raw = probe.texts.map((t) => o200k.get(t) ?? Number.NaN);
      row.typical[cls] = sum(own) / sum(raw);
      row.highest[cls] = Math.max(...own.map((n, i) => n / (raw[i] ?? Number.NaN)));
      if (!isMeasuredClass(cls)) continue;
      // A measured class's ratio as a line in its density (count per o200k token), each probe
      // weighing the same: the ratio at the mean density, and its slope. Weighing probes by
      // their tokens, or pricing tokens, letters and punctuation (or whole-word tokens) as
      // separate counts, foresees a left-out probe no better: a probe misses by 3–15 % on
      // average whatever the line, by which of its words the family holds whole.
      const ratio = own.map((n, i) => n / (raw[i] ?? Number.NaN));
      const dense = probe.texts.map(
        (t, i) => (counts.get(t) ?? 0) / (raw[i] ?? 1) - (density[cls] ?? 0),
      );
      row.typical[cls] = mean(ratio);
      (perUnit[family] as Record<string, number>)[cls] =
        sum(dense.map((x, i) => x * ((ratio[i] ?? 0) - mean(ratio)))) /
        sum(dense.map((x) => x * x));
    }
    const framed = count(familyPromptText(family, tokenizer, { messages, tools: undefined }));
    const bare = count(familyPromptText(family, tokenizer, { messages: [], tools: undefined }));
    const frame = (framed - bare - FRAME_MESSAGES * count("ok")) / frameRaw;
    row.typical.frame = frame;
    row.highest.frame = frame;
    // A request's own framing is the template with no message; the instructions' is what a
    // system message adds beyond its text.
    row.typical.requestFrame = bare / REQUEST_OVERHEAD_TOKENS;
    row.highest.requestFrame = row.typical.requestFrame;
    const instructed = count(
      familyPromptText(family, tokenizer, {
        messages: [{ role: "system" as const, content: "ok" }, ...messages],
        tools: undefined,
      }),
    );
    row.typical.systemFrame = (instructed - framed - count("ok")) / SYSTEM_OVERHEAD_TOKENS;
    row.highest.systemFrame = row.typical.systemFrame;
    const prompt = (calls: typeof PROBE_CALLS) =>
      count(familyPromptText(family, tokenizer, { messages: callTurn(calls), tools: undefined }));
    const call = (prompt(PROBE_CALLS) - prompt(PROBE_CALLS.slice(0, 1))) / callRaw;
    row.typical.call = call;
    row.highest.call = call;
    ratios[family] = row;
    console.log(
      family.padEnd(12),
      Object.entries(row.typical)
        .map(([c, r]) => `${c} ${r.toFixed(3)}`)
        .join("  "),
    );
  }
  // The tables lib/context/class-priors.ts holds (families in TOKENIZER_FAMILIES order).
  for (const which of ["typical", "highest"] as const) {
    console.log(`\n// ${which}: ${TOKENIZER_FAMILIES.join(", ")}`);
    for (const c of CONTENT_CLASSES) {
      const cells = TOKENIZER_FAMILIES.map((f) => (ratios[f]?.[which][c] ?? Number.NaN).toFixed(3));
      console.log(`  ${c}: [${cells.join(", ")}],`);
    }
  }
  console.log("\n// units per o200k token: mean, lowest, highest");
  for (const c of MEASURED_CLASSES) {
    const [lowest, highest] = densityRange[c] ?? [Number.NaN, Number.NaN];
    const cells = [density[c] ?? Number.NaN, lowest, highest].map((v) => v.toFixed(3));
    console.log(`  ${c}: [${cells.join(", ")}],`);
  }
  console.log(`\n// per unit: ${TOKENIZER_FAMILIES.join(", ")}`);
  for (const c of MEASURED_CLASSES) {
    const cells = TOKENIZER_FAMILIES.map((f) => (perUnit[f]?.[c] ?? Number.NaN).toFixed(3));
    console.log(`  ${c}: [${cells.join(", ")}],`);
  }
}

const sum = (values: readonly number[]) => values.reduce((total, v) => total + v, 0);
const mean = (values: readonly number[]) => sum(values) / values.length;

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
