import type { UIMessageChunk } from "ai";
import { expect, it, vi } from "vitest";
import type { Db } from "@/lib/db/client";
import type { Lease } from "@/lib/db/queries/leases";

const queries = vi.hoisted(() => ({
  appendMessageAsTurnHolder: vi.fn(async (): Promise<unknown> => ({})),
}));
vi.mock("@/lib/db/queries/messages", () => queries);
const chats = vi.hoisted(() => ({ getChat: vi.fn(async () => ({ id: "c1" }) as unknown) }));
vi.mock("@/lib/db/queries/chats", () => chats);
const logs = vi.hoisted(() => ({ info: vi.fn(), warn: vi.fn(), error: vi.fn() }));
vi.mock("@/lib/log", () => ({ log: logs }));

const { assembleReply, persistReply } = await import("@/lib/turn/persist");
const { noObservations } = await import("@/lib/turn/observe");

/** The turn's lease, still held: the write runs with its token. */
const held = { asHolder: <T>(write: (lease: Lease) => Promise<T>) => write(token) };
const token: Lease = { chatId: "c1", until: new Date(1), kind: "turn" };

function replyStream() {
  const chunks: UIMessageChunk[] = [
    { type: "start", messageId: "a1" },
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: "Half of it" },
    { type: "text-end", id: "t" },
    { type: "finish", messageMetadata: { stopped: true } },
  ];
  const assembly = assembleReply();
  for (const chunk of chunks) assembly.write(chunk);
  assembly.end();
  return assembly;
}

it("stores a stopped reply as far as it got", async () => {
  queries.appendMessageAsTurnHolder.mockClear();
  const observed = { ...noObservations(), stopped: true };
  expect(await persistReply({} as Db, "c1", replyStream(), observed, held)).toBe(true);
  expect(queries.appendMessageAsTurnHolder).toHaveBeenCalledTimes(1);
});

it("stores nothing when the lease's token is no longer on the chat's row, and says so", async () => {
  // No renewal came round to notice (the process stalled past the lease's term): the write
  // under the token finds another holder's on the row and stores nothing.
  queries.appendMessageAsTurnHolder.mockResolvedValueOnce(null);
  const observed = noObservations();
  observed.finished = true;
  expect(await persistReply({} as Db, "c1", replyStream(), observed, held)).toBe(false);
  expect(queries.appendMessageAsTurnHolder).toHaveBeenLastCalledWith(
    {},
    "c1",
    expect.objectContaining({ role: "assistant" }),
    token,
  );
  expect(observed.leaseLost).toBe(true);
  expect(observed.unsaved).toMatch(/could not be saved.*taken over/);

  // A lease already given up runs no write at all.
  queries.appendMessageAsTurnHolder.mockClear();
  const gone = { asHolder: async () => null };
  const late = { ...noObservations(), finished: true };
  expect(await persistReply({} as Db, "c1", replyStream(), late, gone)).toBe(false);
  expect(queries.appendMessageAsTurnHolder).not.toHaveBeenCalled();
  expect(late.unsaved).toMatch(/taken over/);
});

it("stores nothing when the chat's lease was lost under the turn (another may hold the chat)", async () => {
  queries.appendMessageAsTurnHolder.mockClear();
  const observed = { ...noObservations(), stopped: true, leaseLost: true };
  expect(await persistReply({} as Db, "c1", replyStream(), observed, held)).toBe(false);
  expect(queries.appendMessageAsTurnHolder).not.toHaveBeenCalled();
  // The browser saw the reply: it is told the reply was not kept, not that it was stopped.
  expect(observed.unsaved).toMatch(/could not be saved.*taken over/);

  // Lost before the model wrote anything: the browser would show a reply "Stopped" that nobody
  // stopped; it is told the chat was taken over, to Retry.
  const silent = assembleReply();
  silent.write({ type: "start", messageId: "a2" });
  silent.write({ type: "finish", messageMetadata: { stopped: true } });
  silent.end();
  const unbegun = { ...noObservations(), stopped: true, leaseLost: true };
  expect(await persistReply({} as Db, "c1", silent, unbegun, held)).toBe(false);
  expect(unbegun.unsaved).toMatch(/taken over.*Retry/);

  // Nothing to tell: a turn stopped before its model call showed no reply.
  const early = { ...noObservations(), stopped: true, stoppedBeforeModel: true, leaseLost: true };
  expect(await persistReply({} as Db, "c1", replyStream(), early, held)).toBe(false);
  expect(early.unsaved).toBeUndefined();

  // Nor when the lease went with the chat's row (deleted): quiet, at info level.
  chats.getChat.mockResolvedValueOnce(null);
  logs.warn.mockClear();
  const deleted = { ...noObservations(), stopped: true, leaseLost: true };
  expect(await persistReply({} as Db, "c1", replyStream(), deleted, held)).toBe(false);
  expect(deleted.unsaved).toBeUndefined();
  expect(logs.warn).not.toHaveBeenCalled();
  expect(queries.appendMessageAsTurnHolder).not.toHaveBeenCalled();
});

it("says a reply whose chat was deleted under it is not stored, without logging an error", async () => {
  // What Postgres answers an insert whose chat row is gone.
  const missingChat = Object.assign(new Error("insert or update violates foreign key constraint"), {
    code: "23503",
    constraint: "message_chat_id_chat_id_fk",
  });
  queries.appendMessageAsTurnHolder.mockRejectedValueOnce(missingChat);
  logs.error.mockClear();
  logs.info.mockClear();
  const observed = { ...noObservations(), stopped: true };
  expect(await persistReply({} as Db, "c1", replyStream(), observed, held)).toBe(false);
  expect(logs.error).not.toHaveBeenCalled();
  // Nobody waits for that reply: the chat is gone.
  expect(observed.unsaved).toBeUndefined();
  expect(logs.info).toHaveBeenCalledWith(
    { chatId: "c1" },
    "the chat was deleted during the turn; its reply is not stored",
  );

  // Any other failure to store it is an error.
  queries.appendMessageAsTurnHolder.mockRejectedValueOnce(new Error("disk full"));
  expect(await persistReply({} as Db, "c1", replyStream(), observed, held)).toBe(false);
  expect(logs.error).toHaveBeenCalledTimes(1);
  // The browser is told, with the id of that log line and not the error's own text.
  const [[logged]] = logs.error.mock.calls as unknown as [[{ errorId: string }]];
  expect(observed.unsaved).toContain(`error id ${logged.errorId}`);
  expect(observed.unsaved).not.toContain("disk full");
});

it("holds the reply back until the turn ends, even when its chunks cannot be assembled", async () => {
  const assembly = assembleReply();
  let settled = false;
  const done = assembly.reply.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  assembly.write({ type: "start", messageId: "a1" });
  // A delta for a text part that never started: the SDK refuses to assemble it.
  assembly.write({ type: "text-delta", id: "missing", delta: "lost" });
  await new Promise((resolve) => setTimeout(resolve, 20));
  // The turn still streams: the chat must not be freed under it.
  expect(settled).toBe(false);
  assembly.end();
  await done;
  expect(settled).toBe(true);
});
