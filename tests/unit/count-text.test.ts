import { describe, expect, it } from "vitest";
import { countOf } from "@/lib/count-text";

describe("countOf", () => {
  it("says one in the singular and every other count in the plural, zero included", () => {
    expect(countOf(1, "message")).toBe("1 message");
    expect(countOf(0, "message")).toBe("0 messages");
    expect(countOf(2, "message")).toBe("2 messages");
  });

  it("groups thousands as the rest of the page does", () => {
    expect(countOf(1_204, "token")).toBe("1,204 tokens");
  });

  it("takes the plural it is given for a noun that is not made plural with an s", () => {
    expect(countOf(1, "reply", "replies")).toBe("1 reply");
    expect(countOf(3, "reply", "replies")).toBe("3 replies");
  });
});
