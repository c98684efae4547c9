import { describe, expect, it } from "vitest";
import {
  type ChatSnapshot,
  chatExportSchema,
  chatJsonPieces,
  chatMarkdownPieces,
} from "@/lib/chat/export";
import type { Chat, Message, MessageBranch } from "@/lib/db/schema";

const at = new Date("2026-12-01T10:00:00Z");
const chat = {
  id: "c1",
  title: "Pieces",
  modelId: "demo:demo",
  createdAt: at,
  updatedAt: at,
  contextSummary: "The goal: ship it.",
  summaryWatermark: "m1",
} as Chat;
const row = (seq: number): Message =>
  ({
    id: `m${seq}`,
    chatId: "c1",
    seq,
    role: seq % 2 === 0 ? "user" : "assistant",
    // Quotes, a line break and a tab inside a string: escaped, never a line of the file.
    parts: [{ type: "text", text: `message ${seq}: "quoted"\n\tand more` }],
    metadata: seq === 2 ? { pinned: true } : null,
    createdAt: at,
  }) as Message;

function snapshot(count: number, versions: ChatSnapshot["versions"] = []): ChatSnapshot {
  return { chat, rows: Array.from({ length: count }, (_, i) => row(i)), versions };
}

const version = {
  id: "b1",
  chatId: "c1",
  anchorId: "m2",
  position: 1,
  active: false,
  messages: [
    {
      id: "m2",
      role: "user",
      parts: [{ type: "text", text: "before" }],
      metadata: null,
      createdAt: at.toISOString(),
      seq: 2,
    },
    {
      id: "old",
      role: "assistant",
      parts: [],
      metadata: null,
      createdAt: at.toISOString(),
      seq: 3,
    },
  ],
  summary: null,
  watermark: null,
} as unknown as MessageBranch & { messages: NonNullable<MessageBranch["messages"]> };

describe("the export written in pieces", () => {
  it("is the document JSON.stringify prints with two spaces, and a line break", () => {
    for (const shot of [
      snapshot(0),
      snapshot(5),
      snapshot(3, [version]),
      snapshot(1, [{ ...version, messages: [] }]),
    ]) {
      const text = [...chatJsonPieces(shot, at)].join("");
      const document = chatExportSchema.parse(JSON.parse(text));
      expect(text).toBe(`${JSON.stringify(document, null, 2)}\n`);
      expect(document.messages.map((m) => m.id)).toEqual(shot.rows.map((r) => r.id));
    }
    const withVersion = JSON.parse([...chatJsonPieces(snapshot(3, [version]), at)].join(""));
    expect(withVersion.versions[0].messages.map((m: { id: string }) => m.id)).toEqual([
      "m2",
      "old",
    ]);
    expect(withVersion.messages[2].pinned).toBe(true);
  });

  it("never holds two messages in one piece, as JSON or as Markdown", () => {
    const shot = snapshot(200);
    for (const pieces of [[...chatJsonPieces(shot, at)], [...chatMarkdownPieces(shot, at)]]) {
      expect(pieces.length).toBeGreaterThan(200);
      for (const piece of pieces) {
        // A message's text is in it twice (its text and its parts): count messages, not mentions.
        const messages = new Set(piece.match(/message \d+:/g));
        expect(messages.size).toBeLessThan(2);
      }
    }
  });
});
