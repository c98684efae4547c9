import { describe, expect, it } from "vitest";
import { countOf, formatCount } from "@/lib/count-text";

describe("countOf", () => {
  it("says one in the singular and every other count in the plural, zero included", () => {
    expect(countOf(1, "message")).toBe("1 message");
    expect(countOf(0, "message")).toBe("0 messages");
    expect(countOf(2, "message")).toBe("2 messages");
  });

  it("groups thousands as the rest of the page does", () => {
    expect(countOf(1_204, "token")).toBe("1,204 tokens");
    expect(countOf(1_048_576, "byte")).toBe("1,048,576 bytes");
  });

  it("takes the plural it is given for a noun that is not made plural with an s", () => {
    expect(countOf(1, "reply", "replies")).toBe("1 reply");
    expect(countOf(3, "reply", "replies")).toBe("3 replies");
  });
});

describe("formatCount", () => {
  it("groups thousands in a fixed locale and writes no fraction", () => {
    expect(formatCount(0)).toBe("0");
    expect(formatCount(1_204)).toBe("1,204");
    expect(formatCount(12.6)).toBe("13");
    expect(formatCount(1_048_576)).toBe("1,048,576");
  });
});
