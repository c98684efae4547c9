import { describe, expect, it } from "vitest";
import { stateForBranch } from "@/lib/chat/branches";

const shared = new Set(["m1", "m2"]);
const target = new Set(["anchor", "t1", "t2"]);

describe("stateForBranch: the summary follows the version shown", () => {
  it("restores the target's own summary when it covers part of the target's messages", () => {
    expect(
      stateForBranch({
        current: { summary: "S-current", watermark: "m2" },
        target: { summary: "S-target", watermark: "t1" },
        sharedIds: shared,
        targetIds: target,
      }),
    ).toEqual({ summary: "S-target", watermark: "t1" });
  });

  it("keeps the current summary when it covers only shared messages, or no message at all", () => {
    for (const watermark of ["m1", null]) {
      expect(
        stateForBranch({
          current: { summary: "S-current", watermark },
          target: { summary: "S-old", watermark: "m1" },
          sharedIds: shared,
          targetIds: target,
        }),
      ).toBe("keep");
    }
  });

  it("never keeps a summary of the version being left", () => {
    expect(
      stateForBranch({
        current: { summary: "S-left", watermark: "left-3" },
        target: { summary: "S-shared", watermark: "m2" },
        sharedIds: shared,
        targetIds: target,
      }),
    ).toEqual({ summary: "S-shared", watermark: "m2" });
    expect(
      stateForBranch({
        current: { summary: "S-left", watermark: "left-3" },
        target: { summary: null, watermark: null },
        sharedIds: shared,
        targetIds: target,
      }),
    ).toEqual({ summary: null, watermark: null });
    // A stored watermark that names neither shared nor target messages is not trusted.
    expect(
      stateForBranch({
        current: { summary: "S-left", watermark: "left-3" },
        target: { summary: "S-odd", watermark: "elsewhere" },
        sharedIds: shared,
        targetIds: target,
      }),
    ).toEqual({ summary: null, watermark: null });
  });
});
