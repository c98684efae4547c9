import { isSummaryRequest } from "../fixtures/fake-openai/summarizer";
import type { FakeOpenAI, RecordedRequest } from "../fixtures/fake-openai/types";

/**
 * A chat against a local server that cuts long prompts silently (issue 15), shared by
 * tests/integration/chat/silent-truncation.test.ts and the `local` benchmark: 50 turns of
 * plain prose with 10 facts planted in the user's messages, and how to judge what the model
 * saw — independently of Fold, from the fake server's own record. Loads no Fold module.
 */

export const LOCAL_TURNS = 50;

export type LocalFact = { value: string; plantedTurn: number };

/** What the user plants; none of it occurs in the filler, so a match is never an accident. */
const FACT_VALUES = [
  "https://wiki-4f1c.example.org/runbooks/failover-7731",
  "never deploy on fridays",
  "/srv/cache/nightly-b2e9.toml",
  "c41d9e07a3f2",
  "37.5 ms",
  "https://status-91ad.example.net/incidents/db-2209",
  "always keep two replicas warm",
  "/etc/fold/limits-5a0c.yaml",
  "9f03be71c2d4a8",
  "812.4 MB",
] as const;

/** Plain words only: no identifier the summary's reference ledger would have to keep. */
const VOCABULARY = (
  "the a we should think about how this plan works when our team looks again at what " +
  "matters most for people who read it later and why some parts feel slow or unclear " +
  "so please explain each step with care keep answers short but complete"
).split(" ");

/** Deterministic pseudo-random numbers (mulberry32), so every run sends the same chat. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function phrase(fact: string): string {
  if (/^[a-z ]+$/.test(fact)) return `Constraint: "${fact}".`;
  if (fact.startsWith("http")) return `The reference I mean is ${fact} and nothing else.`;
  if (fact.startsWith("/")) return `The file in question is ${fact} on the build host.`;
  if (/^[0-9a-f]+$/.test(fact)) return `The commit to look at is ${fact} on main.`;
  return `The budget we agreed on is ${fact} at most.`;
}

export type LocalPlan = { turns: string[]; facts: LocalFact[] };

/** 50 user messages of 90–150 words; a fact at the end of every fifth, from the second on. */
export function localPlan(turns = LOCAL_TURNS): LocalPlan {
  const random = seeded(15);
  const facts: LocalFact[] = [];
  const texts = Array.from({ length: turns }, (_, turn) => {
    const count = 90 + Math.floor(random() * 61);
    const words = Array.from(
      { length: count },
      () => VOCABULARY[Math.floor(random() * VOCABULARY.length)],
    );
    const body = `Turn ${turn + 1}: ${words.join(" ")}.`;
    const fact = turn % 5 === 1 ? FACT_VALUES[facts.length] : undefined;
    if (fact === undefined) return body;
    facts.push({ value: fact, plantedTurn: turn });
    return `${body} ${phrase(fact)}`;
  });
  return { turns: texts, facts };
}

/** The chat requests (not the summarizer's) the fake server received since `from`. */
export function chatRequests(fake: FakeOpenAI, from = 0): RecordedRequest[] {
  return fake.requests.slice(from).filter((r) => !isSummaryRequest(r.messages));
}

/** What a request showed the model: the kept tail of a cut prompt, else all its messages. */
export function seenText(request: RecordedRequest | undefined): string {
  if (!request) return "";
  if (request.keptText !== null) return request.keptText;
  return JSON.stringify(request.messages);
}

/** The facts that reach the model in `request`, by plain substring. */
export function factsSeen(facts: readonly LocalFact[], request: RecordedRequest | undefined) {
  const text = seenText(request);
  return facts.filter((fact) => text.includes(fact.value));
}
