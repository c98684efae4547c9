import { readdir, readFile } from "node:fs/promises";
// @ts-expect-error -- a plain .mjs script shared with `npm start` and the e2e runner
import { buildIfNeeded } from "../../scripts/build-if-needed.mjs";
import { isTurnActive } from "../helpers/db";
import { anonymous } from "../helpers/http";
import { type Client, createChat, sendMessage, signUp, startInstance } from "../helpers/instances";
import { eventually } from "../helpers/ui-stream";
import { type BenchChat, directTtftMs, firstTextDeltaAt } from "./chat-turns";
import type { BenchDatabase } from "./database";

/**
 * Loads Fold (through chat-turns): import it only after setting process.env, as chat.ts does.
 *
 * The `chat` benchmark over real HTTP: Fold as `next start` serves it (its own process, on the
 * benchmark's Postgres database, no Redis: one server), each turn paired with the same request
 * sent straight to the fake provider from this process. The server's CPU time is read from
 * /proc, so `cpuMsPerTurn` is Fold's own work (HTTP, Next, the turn, storing the reply); the
 * fake provider runs here, not in the server. Postgres's CPU over the same turns is read the
 * same way when it runs on this machine (`databaseCpuMsPerTurn`).
 */

const PORT = Number(process.env.BENCH_CHAT_HTTP_PORT ?? 3430);
/** Linux reports process times in clock ticks; USER_HZ is 100 on every mainstream kernel. */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * `headersMs`: POST /api/chat until its response headers, when the stream opens: Fold's work
 * before it calls the model, plus HTTP and Next.
 */
export type HttpSample = { directMs: number; foldMs: number; headersMs: number };

type HttpChat = { client: Client; chatId: string; bench: BenchChat };

/**
 * utime + stime of a process, in ms (fields 14 and 15 of /proc/<pid>/stat); with `reaped`,
 * also what its children that ended and were waited for used (cutime + cstime, 16 and 17).
 */
async function processCpuMs(pid: number, reaped = false): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const own = Number(fields[11]) + Number(fields[12]);
  const ticks = reaped ? own + Number(fields[13]) + Number(fields[14]) : own;
  return (ticks * 1_000) / CLOCK_TICKS_PER_SECOND;
}

/**
 * CPU of every Postgres process this machine shows (backends, WAL writer, checkpointer,
 * autovacuum), in ms, with what those that ended used (the postmaster's reaped children: an
 * autovacuum worker lives seconds); null when there are none (the server runs elsewhere).
 * Over the concurrent phase it is the database's work on the turns' behalf: nothing else
 * uses it then.
 */
async function postgresCpuMs(): Promise<number | null> {
  let total = 0;
  let found = false;
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const comm = await readFile(`/proc/${entry}/comm`, "utf8").catch(() => "");
    if (comm.trim() !== "postgres") continue;
    // One that ended between the listing and this read counts in the postmaster's reaped time.
    const ms = await processCpuMs(Number(entry), true).catch(() => 0);
    total += ms;
    found = true;
  }
  return found ? total : null;
}

/**
 * POST /api/chat over HTTP: ms to the response headers and to the first text-delta; then the
 * reply is read and stored.
 */
async function foldHttpTtft(
  chat: HttpChat,
  base: string,
  text: string,
): Promise<{ foldMs: number; headersMs: number }> {
  const started = performance.now();
  const response = await sendMessage(chat.client, base, {
    chatId: chat.chatId,
    modelId: chat.bench.modelId,
    text,
  });
  const headersAt = performance.now();
  if (response.status !== 200 || !response.body) {
    throw new Error(`POST /api/chat answered ${response.status}: ${await response.text()}`);
  }
  const firstAt = await firstTextDeltaAt(response.body);
  await eventually(async () => !(await isTurnActive(chat.bench.database.db, chat.chatId)));
  return { foldMs: firstAt - started, headersMs: headersAt - started };
}

export type HttpRun = {
  /** Samples of every chat running at once. */
  concurrent: HttpSample[];
  /** Samples of one chat alone. */
  single: HttpSample[];
  /** Samples of the same chat, each turn after a pause (a user reading the reply). */
  paused: HttpSample[];
  cpuMsPerTurn: number;
  /** Postgres's CPU over the same turns ÷ turns; null when its processes are not visible here. */
  databaseCpuMsPerTurn: number | null;
  /** The server's CPU per turn of one chat alone whose replies are long (`longReplies`). */
  longReplyCpuMsPerTurn: number;
};

/**
 * `chats` users each with one chat send `turns` turns concurrently (chats in parallel, each
 * chat's turns in sequence), after `warmup` unmeasured turns each; then one chat alone sends
 * `singleTurns` more back to back, and `pausedTurns` more, each after `pauseMs` of quiet (as a
 * user who reads each reply: idle database and provider connections may have closed), and
 * `longReplies.turns` more once `longReplies.begin` has made the provider's replies long. The
 * direct request for the same history goes out just before each Fold turn.
 */
export async function runOverHttp(
  bench: BenchDatabase,
  providerUrl: string,
  modelId: string,
  plan: {
    chats: number;
    turns: number;
    warmup: number;
    singleTurns: number;
    pausedTurns: number;
    pauseMs: number;
    longReplies: { turns: number; begin: () => void };
  },
): Promise<HttpRun> {
  if (!bench.url)
    throw new Error("the HTTP phase needs the Postgres server (PGlite is in-process)");
  buildIfNeeded();
  const instance = await startInstance({ port: PORT, databaseUrl: bench.url, providerUrl });
  try {
    const base = instance.url;
    // The first account becomes the admin: the measured users are ordinary ones.
    await signUp(base, "http-admin@example.com");
    const chats: HttpChat[] = await Promise.all(
      Array.from({ length: plan.chats }, async (_, i) => {
        const client = await signUp(base, `http-${i}@example.com`);
        const chatId = await createChat(client, base);
        // The direct baseline reads the chat's history from the same database.
        const direct: BenchChat = {
          database: bench.database,
          browser: anonymous(),
          chatId,
          modelId,
        };
        return { client, chatId, bench: direct };
      }),
    );
    const run = async (chat: HttpChat, index: number, count: number, label: string) => {
      const samples: HttpSample[] = [];
      for (let turn = 0; turn < count; turn++) {
        const text = `HTTP ${label} chat ${index}, turn ${turn}: how does a context window fill up?`;
        const directMs = await directTtftMs(chat.bench, text);
        samples.push({ directMs, ...(await foldHttpTtft(chat, base, text)) });
      }
      return samples;
    };
    await Promise.all(chats.map((chat, i) => run(chat, i, plan.warmup, "warm-up")));
    const cpuBefore = await processCpuMs(instance.pid);
    const databaseBefore = await postgresCpuMs();
    const concurrent = (
      await Promise.all(chats.map((chat, i) => run(chat, i, plan.turns, "concurrent")))
    ).flat();
    const cpuMsPerTurn = ((await processCpuMs(instance.pid)) - cpuBefore) / concurrent.length;
    const databaseAfter = await postgresCpuMs();
    const databaseCpuMsPerTurn =
      databaseBefore === null || databaseAfter === null
        ? null
        : (databaseAfter - databaseBefore) / concurrent.length;
    const [alone] = chats;
    if (!alone) throw new Error("no chat to run alone");
    const single = await run(alone, 0, plan.singleTurns, "single");
    const paused: HttpSample[] = [];
    for (let turn = 0; turn < plan.pausedTurns; turn++) {
      await new Promise((resolve) => setTimeout(resolve, plan.pauseMs));
      paused.push(...(await run(alone, 0, 1, `paused ${turn}`)));
    }
    plan.longReplies.begin();
    const longBefore = await processCpuMs(instance.pid);
    const long = await run(alone, 0, plan.longReplies.turns, "long");
    const longReplyCpuMsPerTurn = ((await processCpuMs(instance.pid)) - longBefore) / long.length;
    return {
      concurrent,
      single,
      paused,
      cpuMsPerTurn,
      databaseCpuMsPerTurn,
      longReplyCpuMsPerTurn,
    };
  } finally {
    await instance.kill();
  }
}
