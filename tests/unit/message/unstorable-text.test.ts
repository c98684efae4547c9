import { describe, expect, it } from "vitest";
import { z } from "zod";
import { findUnstorableText, storable, unstorableReason } from "@/lib/message/unstorable-text";

const NUL = String.fromCharCode(0);

describe("unstorableReason", () => {
  it.each([
    [`a${NUL}b`, /NUL character/],
    ["\ud800", /lone surrogate/],
    ["x\udfffy", /lone surrogate/],
    ["\udc00\ud800", /lone surrogate/],
  ])("refuses %j", (text, reason) => {
    expect(unstorableReason(text)).toMatch(reason);
  });

  it.each([
    "",
    "plain",
    "🙂 emoji (a surrogate pair)",
    "\u202eRTL\u200b",
    "\\u0000 spelled out",
    "%00",
  ])("accepts %j", (text) => {
    expect(unstorableReason(text)).toBeNull();
  });
});

describe("storable", () => {
  it("adds the refusal to a schema, naming the field", () => {
    const title = storable(z.string().trim().min(1), "title");
    expect(title.safeParse(" ok ").data).toBe("ok");
    const result = title.safeParse(`x${NUL}`);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe(
      "title contains a NUL character (U+0000), which Fold cannot store",
    );
  });
});

describe("findUnstorableText", () => {
  it("finds the first bad string anywhere in a JSON value, keys included, with its path", () => {
    expect(findUnstorableText({ a: [1, "ok", { b: `x${NUL}` }] })).toMatchObject({
      path: ["a", 2, "b"],
      reason: expect.stringMatching(/NUL/),
    });
    expect(findUnstorableText({ "\ud800": 1 })).toMatchObject({
      path: ["\ud800"],
      reason: expect.stringMatching(/^has a key that contains a lone surrogate/),
    });
    expect(findUnstorableText({ a: ["fine", { b: 2 }], c: null })).toBeNull();
  });
});
