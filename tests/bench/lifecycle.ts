// @ts-expect-error -- a plain .mjs script shared with `npm start` and the e2e runner
import { buildIfNeeded } from "../../scripts/build-if-needed.mjs";
import { startFakeOpenAI } from "../fixtures/fake-openai/server";
import {
  type Client,
  createChat,
  type Instance,
  sendMessage,
  signUp,
  startInstance,
} from "../helpers/instances";
import { createPostgresDatabase } from "../helpers/postgres";
import { readUntilText } from "../helpers/ui-stream";
import type { BenchContext, Benchmark, Figures } from "./benchmark";
import { percentile, round1 } from "./measure";

/**
 * `lifecycle`: what a turn's life costs across instances (issue 11), over real HTTP against
 * two `next start` processes on one Postgres and one Redis, with the fake provider in this
 * process so the moment it sees a request go away is measured on the same clock.
 *
 * - backtoback_409s: of 100 turns sent each as soon as the previous stream ended, how many
 *   were refused with 409; backtoback_missing_replies: how many times a GET right after the
 *   stream ended lacked the reply.
 * - stop_to_provider_abort_ms_p95: from sending Stop to instance B until the provider sees
 *   the request that instance A made for the turn close.
 * - resume_first_chunk_ms_p95: from a GET of the live stream on B (a reload landing there)
 *   to its first chunk, while A streams the reply.
 * - crash_unlock_s: from `kill -9` of A mid-turn until B accepts a turn in that chat.
 */

const MODEL = "fake:fake-model";
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const BACK_TO_BACK_TURNS = Number(process.env.LIFECYCLE_TURNS ?? 100);
const SAMPLES = Number(process.env.LIFECYCLE_SAMPLES ?? 20);
const PORT_A = Number(process.env.LIFECYCLE_PORT ?? 3410);

export const benchmark: Benchmark = {
  name: "lifecycle",
  async run(context: BenchContext): Promise<Figures> {
    buildIfNeeded();
    const fake = await startFakeOpenAI({ models: [{ id: "fake-model", maxModelLen: 32_768 }] });
    const database = await createPostgresDatabase();
    const options = { databaseUrl: database.url, redisUrl: REDIS_URL, providerUrl: fake.url };
    let a: Instance | undefined;
    let b: Instance | undefined;
    try {
      a = await startInstance({ ...options, port: PORT_A });
      b = await startInstance({ ...options, port: PORT_A + 1 });
      const client = await signUp(a.url, "lifecycle@example.com");

      // Back to back: short, fast replies, the next message sent the moment a stream ends.
      fake.configure({ chunkDelayMs: 0, replyTokens: 30 });
      const backToBack = await backToBackTurns(client, a.url, BACK_TO_BACK_TURNS);
      console.error(`lifecycle: ${BACK_TO_BACK_TURNS} back-to-back turns done`);

      // Slow replies (about 5 s each) to stop or resume in the middle of.
      fake.configure({ chunkDelayMs: 20, chunkChars: 6, replyTokens: 400 });
      const stops: number[] = [];
      const resumes: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const chatId = await createChat(client, a.url);
        const response = await sendMessage(client, a.url, { chatId, modelId: MODEL, text: "Go." });
        const { rest } = await readUntilText(response);
        resumes.push(await resumeFirstChunkMs(client, b.url, chatId));
        const sentAt = Date.now();
        const stop = await client.fetch(b.url, `/api/chats/${chatId}/stop`, { method: "POST" });
        if (stop.status !== 202) throw new Error(`stop answered ${stop.status}`);
        const abortedAt = await waitFor(
          () => fake.requests.filter((request) => request.stream).at(-1)?.abortedAt ?? null,
        );
        stops.push(abortedAt - sentAt);
        await rest.return(undefined).catch(() => undefined);
      }
      console.error(`lifecycle: ${SAMPLES} stops and resumes done; crashing instance A`);

      // A crash mid-turn: how long until another instance takes the chat.
      const chatId = await createChat(client, a.url);
      const response = await sendMessage(client, a.url, { chatId, modelId: MODEL, text: "Go." });
      await readUntilText(response);
      await a.kill("SIGKILL");
      const killedAt = Date.now();
      for (;;) {
        const retry = await client.fetch(b.url, "/api/chat", {
          method: "POST",
          body: JSON.stringify({ trigger: "regenerate-message", chatId, modelId: MODEL }),
        });
        await retry.body?.cancel();
        if (retry.status === 200) break;
        if (retry.status !== 409) throw new Error(`retry after the crash answered ${retry.status}`);
        if (Date.now() - killedAt > 120_000)
          throw new Error("the chat stayed locked for 2 minutes");
      }
      const crashUnlockS = (Date.now() - killedAt) / 1000;

      context.note("lifecycle.backtoback_409s", `of ${BACK_TO_BACK_TURNS} turns`);
      context.note(
        "lifecycle.stop_to_provider_abort_ms_p95",
        `${SAMPLES} stops, sent to the other instance`,
      );
      context.note(
        "lifecycle.resume_first_chunk_ms_p95",
        `${SAMPLES} reloads on the other instance`,
      );
      return {
        "lifecycle.backtoback_409s": backToBack.conflicts,
        "lifecycle.backtoback_missing_replies": backToBack.missing,
        "lifecycle.stop_to_provider_abort_ms_p50": round1(percentile(stops, 50)),
        "lifecycle.stop_to_provider_abort_ms_p95": round1(percentile(stops, 95)),
        "lifecycle.resume_first_chunk_ms_p50": round1(percentile(resumes, 50)),
        "lifecycle.resume_first_chunk_ms_p95": round1(percentile(resumes, 95)),
        "lifecycle.crash_unlock_s": round1(crashUnlockS),
      };
    } finally {
      await Promise.all([a?.kill(), b?.kill()]);
      await fake.close();
      await database.drop();
    }
  },
};

async function backToBackTurns(client: Client, base: string, turns: number) {
  const chatId = await createChat(client, base);
  let conflicts = 0;
  let missing = 0;
  for (let turn = 0; turn < turns; turn++) {
    const response = await sendMessage(client, base, {
      chatId,
      modelId: MODEL,
      text: `Message ${turn}`,
    });
    if (response.status === 409) conflicts += 1;
    const wire = await response.text();
    const replyId = /"type":"start","messageId":"([^"]+)"/.exec(wire)?.[1];
    const stored = await client.fetch(base, `/api/chats/${chatId}`);
    const { messages } = (await stored.json()) as { messages: Array<{ id: string }> };
    if (response.status === 200 && !messages.some((message) => message.id === replyId))
      missing += 1;
  }
  return { conflicts, missing };
}

/** Milliseconds from asking instance `base` for the chat's live stream to its first chunk. */
async function resumeFirstChunkMs(client: Client, base: string, chatId: string): Promise<number> {
  const started = performance.now();
  const response = await client.fetch(base, `/api/chats/${chatId}/stream`);
  if (response.status !== 200 || !response.body)
    throw new Error(`resume answered ${response.status}`);
  const reader = response.body.getReader();
  await reader.read();
  const elapsed = performance.now() - started;
  await reader.cancel();
  return elapsed;
}

async function waitFor<T>(read: () => T | null, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error("the provider never saw the request go away");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
