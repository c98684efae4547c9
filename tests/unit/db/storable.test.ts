import { describe, expect, it } from "vitest";
import { storableJson, storableText } from "@/lib/db/storable";

describe("text Postgres can store", () => {
  it("replaces NUL and lone surrogates, and leaves everything else alone", () => {
    expect(storableText("a\u0000b")).toBe("a\uFFFDb");
    expect(storableText("x\ud800y")).toBe("x\uFFFDy");
    expect(storableText("emoji 😀 ok")).toBe("emoji 😀 ok");
  });

  it("cleans every string of a JSON value, keys included", () => {
    const value = { parts: [{ type: "text", text: "a\u0000" }], "k\u0000": 1, n: null, ok: true };
    expect(storableJson(value)).toEqual({
      parts: [{ type: "text", text: "a\uFFFD" }],
      "k\uFFFD": 1,
      n: null,
      ok: true,
    });
  });
});
