import { readFileSync } from "node:fs";

/**
 * Reads a CPU profile the turn benchmark wrote (BENCH_TURN_PROFILE) and prints where the time
 * inside its timed spans went: by package (self time), or by function (self or inclusive),
 * per timed turn. The spans are the turns' server-side work up to the provider request.
 *
 *   npx tsx tests/bench/profile-summary.ts <profile.json> [packages|self|inclusive] [filter] [top]
 */

type CallFrame = { functionName: string; url: string; lineNumber: number };
type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] };
type Span = { fromUs: number; toUs: number };
type TurnProfile = {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
  foldSpans: Span[];
};

const [file, mode = "packages", filter = "", top = "30"] = process.argv.slice(2);
if (!file) {
  console.error(
    "usage: profile-summary.ts <profile.json> [packages|self|inclusive] [filter] [top]",
  );
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, "utf8")) as TurnProfile;
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map<number, number>();
for (const node of profile.nodes)
  for (const child of node.children ?? []) parents.set(child, node.id);

const shortUrl = (url: string) =>
  url.replace(/^.*node_modules\//, "").replace(/^.*?\/(app|lib|tests|components)\//, "$1/");

/** Where a frame's code lives: a package, a Node internal, or a path of this repository. */
function packageOf({ url, functionName }: CallFrame): string {
  if (!url) return functionName.startsWith("(") ? functionName : `native ${functionName}`;
  const module = url.match(/node_modules\/((@[^/]+\/)?[^/]+)/);
  if (module?.[1]) return module[1];
  if (url.startsWith("node:")) return url.split("/").slice(0, 3).join("/");
  return shortUrl(url).replace(/\/[^/]*$/, "");
}

const nameOf = (frame: CallFrame) =>
  `${frame.functionName || "(anonymous)"} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;

const totals = new Map<string, number>();
let sampledMs = 0;
let at = profile.startTime;
const inSpan = (us: number) => profile.foldSpans.some((s) => us >= s.fromUs && us <= s.toUs);
for (let i = 0; i < profile.samples.length; i++) {
  at += profile.timeDeltas[i] ?? 0;
  if (!inSpan(at)) continue;
  const ms = (profile.timeDeltas[i + 1] ?? 0) / 1_000;
  const leaf = nodes.get(profile.samples[i] ?? -1);
  if (!leaf) continue;
  sampledMs += ms;
  if (mode === "inclusive") {
    const seen = new Set<string>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parents.get(id)) {
      const node = nodes.get(id);
      if (!node) break;
      const name = nameOf(node.callFrame);
      if (seen.has(name)) continue;
      seen.add(name);
      totals.set(name, (totals.get(name) ?? 0) + ms);
    }
  } else {
    const key = mode === "self" ? nameOf(leaf.callFrame) : packageOf(leaf.callFrame);
    totals.set(key, (totals.get(key) ?? 0) + ms);
  }
}

const turns = profile.foldSpans.length;
console.log(`${turns} timed turns, ${(sampledMs / turns).toFixed(2)} ms sampled per turn`);
for (const [name, ms] of [...totals]
  .filter(([name]) => name.includes(filter))
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(top))) {
  console.log(`${(ms / turns).toFixed(3).padStart(8)}  ${name}`);
}
