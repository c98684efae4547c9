import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { sql } from "drizzle-orm";
import { startFakeOpenAI } from "../fixtures/fake-openai/server";
import { collectGarbage } from "../helpers/collect";
import type { Benchmark, Figures } from "./benchmark";
import { configureFold } from "./fold-env";
import { percentile } from "./measure";
import { buildHistory, statsFor, summaryText } from "./turn-history";

/**
 * `turn`: what Fold's own server-side work costs a turn as the stored chat grows (DESIGN §5,
 * §16). Chats of 100, 1,000 and 10,000 messages are stored in a real migrated database with
 * a summary whose watermark leaves the last 20 messages after it, and a last reply whose real
 * usage is far under the trigger. Each timed turn is a real POST /api/chat through the route
 * handler (session, body, chat, quota, lease, storing the message, loading, Tier 1's no-op
 * path, building the provider request) up to the moment the provider request leaves, seen by
 * a spy on `fetch`; then its reply streams from the fake OpenAI-compatible server and is
 * stored, so every turn finds the chat as a user's next turn would.
 *
 * `turn.cpu_ms_*` is this process's CPU time over that span (Postgres runs in its own
 * process; the fake server is idle until the request leaves). `projection.model_switch_ms_*`
 * times GET /api/chats/:id/context for another model — the ring after a model switch, where
 * the last reply's real usage does not apply and the view is estimated.
 *
 * `turn.cpu_ms_edited_1000` is the turn of a 1,000-message chat edited far back ten times: ten
 * earlier versions of 1,000 messages each kept beside it (message_branch), as a user who
 * rewrote an early question and went on leaves them. A turn reads none of them: it costs what
 * the unedited chat's does.
 *
 * `turn.cpu_ms_after_collections_1000` is the same turn after three full collections (forced
 * here; in a server, other requests or a long reply's stream bring them between two turns):
 * whatever V8 drops then (compiled regular expressions, above all) the next turn pays again.
 */

const PROVIDER = "fake";
const MODEL = "bench-model";
/** Another model on the same server: the last reply is not its, so the view is estimated. */
const OTHER_MODEL = "bench-other";
const MODEL_ID = `${PROVIDER}:${MODEL}`;
const OTHER_MODEL_ID = `${PROVIDER}:${OTHER_MODEL}`;
/** Large enough that the keep window, the summary and the timed turns stay under the trigger. */
const WINDOW_TOKENS = 128_000;
const SIZES = [100, 1_000, 10_000] as const;
/** Messages after the watermark: the keep window a compaction leaves behind. */
const KEEP_WINDOW_MESSAGES = 20;
/** Untimed turns per chat first (JIT, pool connections, window cache), then timed ones. */
const WARMUP_TURNS = 3;
const TIMED_TURNS = 15;
/** Turns timed after full collections, each after COLLECTIONS_BEFORE of them. */
const COLLECTED_TURNS = 8;
const COLLECTIONS_BEFORE = 3;
const COLLECTED_SIZE = 1_000;
/** The edited chat: this many stored messages, and this many earlier versions of as many each. */
const EDITED_SIZE = 1_000;
const EDITED_VERSIONS = 10;
const WARMUP_PROJECTIONS = 3;
const TIMED_PROJECTIONS = 25;
/** Rows per INSERT while seeding. */
const SEED_BATCH_ROWS = 500;
/**
 * Set to a file path to write a CPU profile of the timed turns: open it in Chrome DevTools, or
 * sum it by package or function over the timed spans with tests/bench/profile-summary.ts.
 */
const PROFILE_FILE = process.env.BENCH_TURN_PROFILE;

/** When the span ran, in µs of the monotonic clock a CPU profile's timestamps use. */
type ProviderCall = { cpuMs: number; wallMs: number; fromUs: number; toUs: number };

const monotonicUs = () => Number(process.hrtime.bigint() / 1_000n);

/**
 * Watches `fetch` for the next chat-completion request: when it leaves, the CPU time and
 * wall time since `arm` was called. The AI SDK reads `globalThis.fetch` at each call.
 */
function providerCallSpy() {
  const realFetch = globalThis.fetch;
  let armed: {
    cpu: NodeJS.CpuUsage;
    at: number;
    fromUs: number;
    resolve: (call: ProviderCall) => void;
  } | null = null;
  globalThis.fetch = (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (armed && url.endsWith("/chat/completions")) {
      const cpu = process.cpuUsage(armed.cpu);
      armed.resolve({
        cpuMs: (cpu.user + cpu.system) / 1_000,
        wallMs: performance.now() - armed.at,
        fromUs: armed.fromUs,
        toUs: monotonicUs(),
      });
      armed = null;
    }
    return realFetch(input, init);
  };
  return {
    /** Call right before the turn starts; resolves when its provider request leaves. */
    arm(): Promise<ProviderCall> {
      return new Promise((resolve) => {
        armed = { cpu: process.cpuUsage(), at: performance.now(), fromUs: monotonicUs(), resolve };
      });
    },
    restore() {
      globalThis.fetch = realFetch;
    },
  };
}

const median = (values: readonly number[]) => percentile(values, 50);
/** ms, two decimals. */
const round2 = (value: number) => Math.round(value * 100) / 100;

export const benchmark: Benchmark = {
  name: "turn",
  async run(context) {
    const fake = await startFakeOpenAI({
      models: [
        { id: MODEL, maxModelLen: WINDOW_TOKENS },
        { id: OTHER_MODEL, maxModelLen: WINDOW_TOKENS },
      ],
      chunkDelayMs: 0,
    });
    configureFold(fake.url, PROVIDER);
    const spy = providerCallSpy();
    // Fold parses its environment on first use: load it only now.
    const { openBenchDatabase } = await import("./database");
    const chatApi = await import("@/app/api/chat/route");
    const chatsRoute = await import("@/app/api/chats/route");
    const contextRoute = await import("@/app/api/chats/[id]/context/route");
    const { chatRequestFrame } = await import("@/lib/ai/request-frame");
    const { SUMMARY_HEADINGS } = await import("@/lib/compaction/prompts");
    const { summaryMessage } = await import("@/lib/compaction/view");
    const { defaultEstimator } = await import("@/lib/context/tokens");
    const { casCompactionState } = await import("@/lib/db/compaction-state");
    const { getChat } = await import("@/lib/db/queries/chats");
    const { archiveRows } = await import("@/lib/db/queries/branches");
    const { message, messageBranch } = await import("@/lib/db/schema");
    const { register, sessionOf } = await import("../helpers/auth");
    const { isTurnActive } = await import("../helpers/db");
    const { call } = await import("../helpers/http");
    const { eventually } = await import("../helpers/ui-stream");

    const bench = await openBenchDatabase();
    const { database } = bench;
    const { db } = database;
    try {
      const { response, browser } = await register(database, "turns@example.com");
      if (!response.ok) throw new Error(`sign-up answered ${response.status}`);
      // As the browser's session hook does on load: the signed session cookie is refreshed
      // (the first account became admin after its sign-up cookie was written).
      await sessionOf(database, browser);

      /** A chat of `size` stored messages ending with a reply, summarized up to the keep window. */
      async function seed(size: number): Promise<string> {
        const created = await call(database, chatsRoute.POST, {
          path: "/api/chats",
          method: "POST",
          body: { title: `turn ${size}`, modelId: MODEL_ID },
          browser,
        });
        if (created.status !== 201) throw new Error(`POST /api/chats answered ${created.status}`);
        const chatId = ((await created.json()) as { chat: { id: string } }).chat.id;
        const chat = await getChat(db, chatId);
        if (!chat) throw new Error("the new chat is gone");
        const summary = summaryText(SUMMARY_HEADINGS);
        const watermarkIndex = size - 1 - KEEP_WINDOW_MESSAGES;
        const history = buildHistory(size, chat.version, chatId, MODEL_ID);
        const written = await casCompactionState(db, chatId, chat.version, {
          contextSummary: summary,
          summaryWatermark: history[watermarkIndex]?.id ?? null,
        });
        if (!written?.won) throw new Error("could not store the summary and watermark");
        // The last reply was sent this view at this version: its real count is the view's size.
        const after = history.slice(watermarkIndex + 1);
        const last = after.at(-1);
        if (last?.role !== "assistant" || !last.metadata?.stats) {
          throw new Error("the seeded history must end with a reply");
        }
        const frame = await chatRequestFrame(new Date());
        last.metadata.stats = statsFor({
          model: MODEL_ID,
          contextTokens:
            frame.overheadTokens +
            defaultEstimator.estimateUIMessages([summaryMessage(summary), ...after.slice(0, -1)]),
          outputTokens: last.metadata.stats.outputTokens,
          at: last.metadata.stats.startedAt,
          viewVersion: written.chat.version,
        });
        for (let at = 0; at < history.length; at += SEED_BATCH_ROWS) {
          await db.insert(message).values(
            history.slice(at, at + SEED_BATCH_ROWS).map((m, i) => ({
              id: m.id,
              chatId,
              seq: at + i,
              role: m.role,
              parts: m.parts,
              metadata: m.metadata ?? null,
            })),
          );
        }
        return chatId;
      }

      /**
       * The chat's earlier versions, as editing its first message `versions` times left them:
       * each holds that message and all after it, `size` messages (archiveBranch's rows).
       */
      async function seedVersions(chatId: string, versions: number, size: number): Promise<void> {
        const anchorId = `${chatId}-0`;
        for (let position = 1; position <= versions; position++) {
          const archived = buildHistory(size, 0, `${chatId}-v${position}`, MODEL_ID).map(
            (m, seq) => ({
              id: seq === 0 ? anchorId : m.id,
              chatId,
              seq,
              role: m.role,
              parts: m.parts,
              metadata: m.metadata ?? null,
              createdAt: new Date(),
            }),
          );
          await db.insert(messageBranch).values({
            chatId,
            anchorId,
            position,
            messages: archiveRows(archived),
          });
        }
      }

      /** One real turn; its cost up to the provider request. Fails if Tier 1 compacted. */
      async function turn(chatId: string): Promise<ProviderCall> {
        const sent = spy.arm();
        const answered = await call(database, chatApi.POST, {
          path: "/api/chat",
          method: "POST",
          body: {
            trigger: "submit-message",
            chatId,
            modelId: MODEL_ID,
            message: {
              id: `u-${randomUUID()}`,
              role: "user",
              parts: [{ type: "text", text: "And what should I change first?" }],
            },
          },
          browser,
        });
        if (answered.status !== 200) {
          throw new Error(`POST /api/chat answered ${answered.status}: ${await answered.text()}`);
        }
        const [cost, body] = await Promise.all([sent, answered.text()]);
        if (body.includes("compact_context"))
          throw new Error("the turn compacted: not Tier 1's no-op path");
        if (body.includes('"type":"error"'))
          throw new Error(`the turn failed: ${body.slice(0, 400)}`);
        await eventually(async () => !(await isTurnActive(db, chatId)));
        return cost;
      }

      /** GET /api/chats/:id/context for another model; wall ms. */
      async function switchProjection(chatId: string): Promise<number> {
        const started = performance.now();
        const answered = await call(database, contextRoute.GET, {
          path: `/api/chats/${chatId}/context?modelId=${encodeURIComponent(OTHER_MODEL_ID)}`,
          params: { id: chatId },
          browser,
        });
        const body = (await answered.json()) as { projectedTokens?: number };
        const ms = performance.now() - started;
        if (answered.status !== 200 || typeof body.projectedTokens !== "number") {
          throw new Error(`GET context answered ${answered.status}`);
        }
        return ms;
      }

      /** A timed chat: its stored messages, and the earlier versions kept beside it. */
      type Timed = { size: number; versions: number; chatId: string };
      const labelOf = ({ size, versions }: Timed) => (versions ? `edited_${size}` : String(size));
      const chats: Timed[] = [];
      for (const size of SIZES) chats.push({ size, versions: 0, chatId: await seed(size) });
      const edited = await seed(EDITED_SIZE);
      await seedVersions(edited, EDITED_VERSIONS, EDITED_SIZE);
      const timed = [...chats, { size: EDITED_SIZE, versions: EDITED_VERSIONS, chatId: edited }];
      // A database that grew to these sizes has planner statistics (autovacuum analyzes it);
      // one just bulk-loaded does not yet, and would be timed on plans nobody runs.
      await db.execute(sql`analyze`);
      // Warm every size before any is timed: the first measured pays no JIT.
      for (const { chatId } of timed) {
        for (let i = 0; i < WARMUP_TURNS; i++) await turn(chatId);
      }
      for (const { chatId } of chats) {
        for (let i = 0; i < WARMUP_PROJECTIONS; i++) await switchProjection(chatId);
      }

      const figures: Figures = {};
      const profiler = PROFILE_FILE ? new Session() : null;
      if (profiler) {
        profiler.connect();
        await profiler.post("Profiler.enable");
        // A turn's span is a few ms: sample every 100 µs (the default is 1 ms).
        await profiler.post("Profiler.setSamplingInterval", { interval: 100 });
        await profiler.post("Profiler.start");
      }
      const spans: ProviderCall[] = [];
      // Round robin over the sizes: each size's turns see the same warmth of the JIT (timed one
      // size after another, the first size paid for the code still being optimized).
      const costsByChat = new Map<Timed, ProviderCall[]>(timed.map((chat) => [chat, []]));
      for (let i = 0; i < TIMED_TURNS; i++) {
        for (const chat of timed) {
          const cost = await turn(chat.chatId);
          costsByChat.get(chat)?.push(cost);
          spans.push(cost);
        }
      }
      for (const chat of timed) {
        const { size, versions: earlier } = chat;
        const label = labelOf(chat);
        const costs = costsByChat.get(chat) ?? [];
        figures[`turn.cpu_ms_${label}`] = round2(median(costs.map((c) => c.cpuMs)));
        figures[`turn.wall_ms_${label}`] = round2(median(costs.map((c) => c.wallMs)));
        const versions = earlier
          ? `, and ${earlier} earlier versions of ${size} messages each`
          : "";
        context.note(
          `turn.cpu_ms_${label}`,
          `ms of CPU, median of ${TIMED_TURNS}: POST /api/chat in-process to the provider request leaving, chat of ${size} stored messages (${KEEP_WINDOW_MESSAGES}+ after the watermark)${versions}, ${bench.label}`,
        );
        context.note(
          `turn.wall_ms_${label}`,
          "ms of wall time over the same span (database round trips included)",
        );
      }
      if (profiler && PROFILE_FILE) {
        const { profile } = await profiler.post("Profiler.stop");
        // The timed spans ride along, so a reader can keep only the samples inside them.
        await writeFile(PROFILE_FILE, JSON.stringify({ ...profile, foldSpans: spans }));
        profiler.disconnect();
      }
      const collected = chats.find((c) => c.size === COLLECTED_SIZE);
      if (collected) {
        const costs: number[] = [];
        for (let i = 0; i < COLLECTED_TURNS; i++) {
          await collectGarbage(COLLECTIONS_BEFORE);
          costs.push((await turn(collected.chatId)).cpuMs);
        }
        figures[`turn.cpu_ms_after_collections_${COLLECTED_SIZE}`] = round2(median(costs));
        context.note(
          `turn.cpu_ms_after_collections_${COLLECTED_SIZE}`,
          `ms of CPU, median of ${COLLECTED_TURNS}: the same span, each turn after ${COLLECTIONS_BEFORE} full collections (forced), chat of ${COLLECTED_SIZE} stored messages`,
        );
      }
      for (const { size, chatId } of chats) {
        const times: number[] = [];
        for (let i = 0; i < TIMED_PROJECTIONS; i++) times.push(await switchProjection(chatId));
        figures[`projection.model_switch_ms_${size}`] = round2(median(times));
        context.note(
          `projection.model_switch_ms_${size}`,
          `ms, median of ${TIMED_PROJECTIONS}: GET /api/chats/:id/context for another model than the last reply's (the view is estimated), chat of ${size} stored messages`,
        );
      }
      return figures;
    } finally {
      spy.restore();
      await bench.dispose();
      await fake.close();
    }
  },
};
