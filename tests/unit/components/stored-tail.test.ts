import { describe, expect, it } from "vitest";
import { withStoredTail } from "@/components/chat/stored-tail";
import type { FoldUIMessage } from "@/lib/message/ui-message";

const message = (id: string, text = id): FoldUIMessage => ({
  id,
  role: "user",
  parts: [{ type: "text", text }],
});
const ids = (list: FoldUIMessage[]) => list.map((m) => m.id);

describe("withStoredTail", () => {
  it("keeps what precedes the page and takes the page's version of the rest", () => {
    const shown = ["a", "b", "c", "d"].map((id) => message(id));
    const page = [message("c", "stored c"), message("d"), message("e")];
    const merged = withStoredTail(shown, page);
    expect(ids(merged)).toEqual(["a", "b", "c", "d", "e"]);
    expect(merged[2]?.parts).toEqual([{ type: "text", text: "stored c" }]);
  });

  it("drops a message the server did not store (a refused send)", () => {
    const shown = ["a", "b", "unsent"].map((id) => message(id));
    expect(ids(withStoredTail(shown, [message("a"), message("b")]))).toEqual(["a", "b"]);
  });

  it("takes the page alone when it does not overlap what is shown", () => {
    expect(ids(withStoredTail([message("x")], [message("y")]))).toEqual(["y"]);
  });

  it("empties the view only when the server holds no messages", () => {
    expect(withStoredTail([message("a")], [])).toEqual([]);
  });
});
