import { afterEach, describe, expect, it, vi } from "vitest";
import {
  fetchStoredPage,
  messageBeingAnswered,
  olderBeforePage,
  withCompactionEntry,
  withEntriesPutBack,
  withStoredTail,
} from "@/components/chat/stored-tail";
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

describe("a stored page over older pages and useChat's newest", () => {
  const range = (from: number, to: number) =>
    Array.from({ length: to - from + 1 }, (_, i) => message(`m${from + i}`));

  it("shows each message once when the page begins among the older pages (an edit left useChat only the newest)", () => {
    // useChat holds m51…m59, the edited m60 and its reply; m1…m50 were scrolled back to since.
    const shown = [...range(51, 59), message("m60-edited"), message("a61")];
    const older = range(1, 50);
    const page = [...range(12, 59), message("m60-edited"), message("a61")];
    const timeline = [...olderBeforePage(older, shown, page), ...withStoredTail(shown, page)];
    expect(ids(timeline)).toEqual([...ids(range(1, 59)), "m60-edited", "a61"]);
  });

  it("keeps the older pages whole when the page begins in useChat's messages", () => {
    const older = range(1, 10);
    const shown = range(11, 20);
    expect(olderBeforePage(older, shown, range(15, 21))).toBe(older);
    // Nor where it begins nowhere shown (history rewritten): the page alone is true then.
    expect(olderBeforePage(older, shown, [message("x")])).toBe(older);
  });
});

describe("withCompactionEntry", () => {
  const reply = (id: string): FoldUIMessage => ({
    id,
    role: "assistant",
    parts: [{ type: "text", text: "" }],
  });
  const entry = reply("entry");

  it("puts a background compaction's entry before the reply still being written, which stays last", () => {
    const shown = [message("q1"), reply("a1"), message("q2"), reply("a2")];
    expect(ids(withCompactionEntry(shown, entry, true))).toEqual(["q1", "a1", "q2", "entry", "a2"]);
  });

  it("adds it at the end when no reply is being written, or before the reply has begun", () => {
    const answered = [message("q1"), reply("a1")];
    expect(ids(withCompactionEntry(answered, entry, false))).toEqual(["q1", "a1", "entry"]);
    const asked = [message("q1"), reply("a1"), message("q2")];
    expect(ids(withCompactionEntry(asked, entry, true))).toEqual(["q1", "a1", "q2", "entry"]);
  });

  it("does not add an entry that is already shown", () => {
    const shown = [message("q1"), entry, reply("a1")];
    expect(withCompactionEntry(shown, entry, true)).toBe(shown);
  });
});

describe("withEntriesPutBack", () => {
  const reply = (id: string): FoldUIMessage => ({
    id,
    role: "assistant",
    parts: [{ type: "text", text: id }],
  });
  const entry: FoldUIMessage = { ...reply("note"), metadata: { compaction: true } };
  const before = [message("q1"), reply("a1"), entry];

  it("puts an entry the rewrite took off the screen back before the new reply", () => {
    const shown = [message("q1"), reply("a1-again")];
    expect(ids(withEntriesPutBack(shown, [entry], before))).toEqual(["q1", "note", "a1-again"]);
  });

  it("puts it at the end when no new reply came (the old reply is not taken for one)", () => {
    expect(ids(withEntriesPutBack([message("q1")], [entry], before))).toEqual(["q1", "note"]);
    const refused = [message("q1"), reply("a1")];
    expect(ids(withEntriesPutBack(refused, [entry], before))).toEqual(["q1", "a1", "note"]);
  });

  it("leaves the timeline as it is when the entries are shown already", () => {
    expect(withEntriesPutBack(before, [entry], before)).toBe(before);
  });
});

describe("messageBeingAnswered", () => {
  const reply = (id: string): FoldUIMessage => ({ id, role: "assistant", parts: [] });
  const entry = (id: string): FoldUIMessage => ({
    id,
    role: "assistant",
    parts: [],
    metadata: { compaction: true } as FoldUIMessage["metadata"],
  });

  it("is the last message before its reply begins, and the one before the reply after", () => {
    expect(messageBeingAnswered([message("u1")])).toBe("u1");
    expect(messageBeingAnswered([message("u1"), reply("r1")])).toBe("u1");
    expect(messageBeingAnswered([message("u1"), reply("r1"), reply("r2")])).toBeUndefined();
    expect(messageBeingAnswered([reply("r1")])).toBeUndefined();
    expect(messageBeingAnswered([])).toBeUndefined();
  });

  it("still names the message once a background fold's entry lands before the streaming reply", () => {
    const streaming = [message("u0"), reply("r0"), message("u1"), reply("r1")];
    const shown = withCompactionEntry(streaming, entry("c1"), true);
    expect(ids(shown)).toEqual(["u0", "r0", "u1", "c1", "r1"]);
    expect(messageBeingAnswered(shown)).toBe("u1");
    expect(messageBeingAnswered([message("u1"), entry("c1")])).toBe("u1");
  });
});

describe("fetchStoredPage", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  function stubWindow() {
    const assign = vi.fn();
    const dispatchEvent = vi.fn();
    vi.stubGlobal("window", {
      location: { pathname: "/chat/c1", search: "", assign },
      dispatchEvent,
    });
    return { assign, dispatchEvent };
  }

  /** The server answers every request with `body`, as JSON with `status`. */
  function answering(body: unknown, status = 200) {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => Response.json(body, { status })),
    );
  }

  it("sends a page polling a reply to sign in once its account was disabled", async () => {
    const { assign } = stubWindow();
    answering(
      { error: { code: "forbidden:account_disabled", message: "This account is disabled." } },
      403,
    );
    expect(await fetchStoredPage("c1")).toBeNull();
    expect(assign).toHaveBeenCalledExactlyOnceWith("/login?next=%2Fchat%2Fc1&reason=disabled");
  });

  it("shows the database outage when a poll finds the database down", async () => {
    const { dispatchEvent } = stubWindow();
    answering(
      { error: { code: "unavailable:database", message: "The database is unreachable." } },
      503,
    );
    expect(await fetchStoredPage("c1")).toBeNull();
    expect(dispatchEvent).toHaveBeenCalledOnce();
  });

  it("reads the page and says whether a reply is still being written", async () => {
    stubWindow();
    const onGone = vi.fn();
    answering({ messages: [], replying: true });
    expect(await fetchStoredPage("c1", undefined, onGone)).toEqual({
      messages: [],
      replying: true,
    });
    expect(onGone).not.toHaveBeenCalled();
  });
});
