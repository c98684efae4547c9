import { afterAll, beforeAll, expect, it, vi } from "vitest";

// Two Ollama servers running a model trained for 131,072 tokens at 4,096 and cutting longer
// prompts silently: one answers /api/ps (the model loads with the first request), one cannot
// (an older server, or a proxy). Neither has a default context configured in Fold.
const servers = await vi.hoisted(async () => {
  const { startFakeOpenAI } = await import("../../fixtures/fake-openai/server");
  const ollama = {
    flavor: "ollama" as const,
    truncatePrompts: true,
    models: [{ id: "llama3.1:8b", maxModelLen: 4096, trainedContext: 131_072 }],
    summarizer: "extractive" as const,
    replyTokens: 120,
    chunkChars: 64,
  };
  const withPs = await startFakeOpenAI({ ...ollama, loadState: "on-first-request" });
  const withoutPs = await startFakeOpenAI({ ...ollama, loadState: "unreported" });
  process.env.OPENAI_COMPATIBLE_BASE_URL = withPs.url;
  process.env.OPENAI_COMPATIBLE_NAME = "ollama";
  process.env.OPENAI_COMPATIBLE_2_BASE_URL = withoutPs.url;
  process.env.OPENAI_COMPATIBLE_2_NAME = "ollama-old";
  process.env.DEMO_MODEL = "never";
  return { withPs, withoutPs };
});

import { getCalibration } from "@/lib/db/queries/calibration";
import { getObservedWindow } from "@/lib/db/queries/observed-windows";
import { compactionEvent } from "@/lib/db/schema";
import { windowResolver } from "@/lib/model-window/window";
import type { FakeOpenAI } from "../../fixtures/fake-openai/types";
import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import type { Browser } from "../../helpers/http";
import { chatRequests, factsSeen, localPlan } from "../../helpers/local-chat";
import { newChat, sendTurn } from "../../helpers/turns";

const MODEL = "llama3.1:8b";
const CHAT_TIMEOUT_MS = 180_000;

afterAll(async () => {
  await servers.withPs.close();
  await servers.withoutPs.close();
});

type Turn = { cut: boolean; truncationTrace: boolean; errors: number };

/** Every planned turn through POST /api/chat; per turn, whether the server cut a chat request. */
async function runChat(
  database: Parameters<typeof sendTurn>[0],
  browser: Browser,
  fake: FakeOpenAI,
  provider: string,
  onTurn?: (turn: number) => Promise<void>,
): Promise<Turn[]> {
  const chatId = await newChat(database, browser);
  const turns: Turn[] = [];
  for (const [index, text] of localPlan().turns.entries()) {
    const from = fake.requests.length;
    const { response, chunks } = await sendTurn(database, browser, {
      chatId,
      modelId: `${provider}:${MODEL}`,
      text,
    });
    turns.push({
      cut: chatRequests(fake, from).some((r) => r.truncatedFrom !== null),
      // The detection's own entry; the compaction it causes next turn carries the same reason.
      truncationTrace: chunks.some((c) => {
        const output = c.output as { reason?: string; outcome?: string } | undefined;
        return (
          c.type === "tool-output-available" &&
          output?.reason === "truncated" &&
          output.outcome === "skipped"
        );
      }),
      // A refused request stores nothing of the turn: as much a failure as an error in the stream.
      errors: response.ok ? chunks.filter((c) => c.type === "error").length : 1,
    });
    await onTurn?.(index);
  }
  return turns;
}

describeEachDriver("a local server that cuts prompts silently", (use) => {
  let browser: Browser;

  beforeAll(async () => {
    // Windows are cached per process, observations live per database: start clean.
    windowResolver().clear();
    ({ browser } = await register(use(), "local@example.com"));
  });

  it(
    "with /api/ps answering, Fold compacts to the loaded 4,096 and no request is ever cut",
    async () => {
      const database = use();
      const turns = await runChat(database, browser, servers.withPs, "ollama");
      expect(turns.filter((t) => t.errors > 0)).toEqual([]);
      expect(turns.filter((t) => t.cut)).toEqual([]);
      expect(chatRequests(servers.withPs).length).toBeGreaterThanOrEqual(50);
      expect(servers.withPs.requests.every((r) => r.truncatedFrom === null)).toBe(true);
      expect(await getObservedWindow(database.db, "ollama", MODEL)).toBeNull();
    },
    CHAT_TIMEOUT_MS,
  );

  it(
    "without /api/ps: at most one cut turn, then detection, compaction, no further cuts",
    async () => {
      const database = use();
      const fake = servers.withoutPs;
      const plan = localPlan();
      const calibrations: Awaited<ReturnType<typeof getCalibration>>[] = [];
      const turns = await runChat(database, browser, fake, "ollama-old", async () => {
        calibrations.push(await getCalibration(database.db, "ollama-old", MODEL));
      });
      expect(turns.filter((t) => t.errors > 0)).toEqual([]);

      const cut = turns.flatMap((t, i) => (t.cut ? [i] : []));
      expect(cut.length).toBeGreaterThanOrEqual(1);
      expect(cut.length).toBeLessThanOrEqual(1);
      const cutTurn = cut[0] as number;
      // Detected on the cut turn itself: the timeline says so.
      expect(turns[cutTurn]?.truncationTrace).toBe(true);
      expect(turns.filter((t) => t.truncationTrace)).toHaveLength(1);

      // The model's window is now what the server kept; the chat compacted on the next turn.
      const observed = await getObservedWindow(database.db, "ollama-old", MODEL);
      expect(observed).toMatchObject({ contextWindow: 4096, chainWindow: 131_072 });
      const resolved = await windowResolver().resolve("ollama-old", MODEL, database.db);
      expect(resolved).toMatchObject({ contextWindow: 4096, source: "observed" });
      const events = await database.db.select().from(compactionEvent);
      expect(events.some((e) => e.reason === "truncated" && e.outcome === "skipped")).toBe(true);
      expect(events.some((e) => e.reason === "truncated" && e.outcome === "summarized")).toBe(true);

      // The cut turn taught calibration nothing.
      expect(calibrations[cutTurn - 1]?.samples).toBeGreaterThan(0);
      expect(calibrations[cutTurn]).toEqual(calibrations[cutTurn - 1]);

      // Facts planted before the cut reach the model afterwards, in every later request.
      const before = plan.facts.filter((f) => f.plantedTurn < cutTurn);
      expect(before.length).toBeGreaterThan(0);
      const final = chatRequests(fake).at(-1);
      expect(factsSeen(before, final)).toEqual(before);
      expect(factsSeen(plan.facts, final)).toEqual(plan.facts);
    },
    CHAT_TIMEOUT_MS,
  );
});
