import { describe, expect, it } from "vitest";
import { titleFromMessage } from "@/lib/chat/title";
import { headOf } from "@/lib/message/unstorable-text";

describe("a chat's title from its first message", () => {
  it("is the first line, cut on a word boundary", () => {
    expect(titleFromMessage("\n  # Plan the trip\nmore")).toBe("Plan the trip");
    const long = titleFromMessage(`${"word ".repeat(30)}end`);
    expect(long?.endsWith("…")).toBe(true);
    expect(long?.length).toBeLessThanOrEqual(61);
  });

  it("is none when the message has nothing to name it by (the chat stays untitled)", () => {
    expect(titleFromMessage("   \n ")).toBeNull();
    expect(titleFromMessage("---")).toBeNull();
  });

  it("never ends in half an emoji (it could not be stored or sent back)", () => {
    for (const text of [`a${"😀".repeat(40)}`, `${"😀".repeat(40)}`]) {
      const title = titleFromMessage(text);
      expect(title?.isWellFormed()).toBe(true);
      expect(title?.endsWith("…")).toBe(true);
    }
  });
});

describe("headOf", () => {
  it("cuts at max UTF-16 units, one fewer rather than split a surrogate pair", () => {
    expect(headOf("abcdef", 3)).toBe("abc");
    expect(headOf("ab", 3)).toBe("ab");
    expect(headOf("a😀b", 2)).toBe("a");
    expect(headOf("a😀b", 3)).toBe("a😀");
  });
});
