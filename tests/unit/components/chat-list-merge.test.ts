import { describe, expect, it } from "vitest";
import { type ChatListItem, withRefreshedFirstPage } from "@/components/chat/use-chats";

const at = (second: number, micro = 0) =>
  `2026-11-28T01:00:${String(second).padStart(2, "0")}.${String(micro).padStart(6, "0")}Z`;
const chat = (id: string, updated: string, created = updated): ChatListItem => ({
  id,
  title: id,
  updatedAt: updated,
  createdAt: created,
});

describe("a refreshed first page of the chat list", () => {
  it("keeps the older chats loaded below it and drops those now on it", () => {
    const older = chat("00000000-0000-4000-8000-000000000001", at(1));
    const moved = chat("00000000-0000-4000-8000-000000000002", at(2));
    const kept = chat("00000000-0000-4000-8000-000000000003", at(5));
    const list = [kept, moved, older];
    const first = [{ ...moved, updatedAt: at(9) }, kept];
    expect(withRefreshedFirstPage(list, first).map((c) => c.id)).toEqual([
      moved.id,
      kept.id,
      older.id,
    ]);
  });

  it("keeps an older chat active in the same instant as the page's last one, ordered after it", () => {
    const last = chat("00000000-0000-4000-8000-00000000000b", at(3), at(1, 500));
    const tied = chat("00000000-0000-4000-8000-00000000000a", at(3), at(1, 400));
    expect(withRefreshedFirstPage([last, tied], [last]).map((c) => c.id)).toEqual([
      last.id,
      tied.id,
    ]);
  });
});
