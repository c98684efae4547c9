import { describe, expect, it } from "vitest";
import { AMBER_SHARE_OF_TRIGGER, ringTone } from "@/components/context/ring-math";

/** An 8,192 window whose budget compacts at 4,800 tokens: about 59 % of the window. */
const TRIGGER = 4_800;
const base = { limitTokens: TRIGGER, compactsNext: false, source: "provider" };

describe("ringTone", () => {
  it("stays neutral well below the trigger", () => {
    expect(ringTone({ ...base, projectedTokens: 1_000 })).toBe("neutral");
  });

  it("turns amber as the chat approaches the trigger, long before 70 % of the window", () => {
    const approaching = Math.ceil(AMBER_SHARE_OF_TRIGGER * TRIGGER);
    expect(approaching / 8_192).toBeLessThan(0.7);
    expect(ringTone({ ...base, projectedTokens: approaching - 1 })).toBe("neutral");
    expect(ringTone({ ...base, projectedTokens: approaching })).toBe("amber");
  });

  it("turns red at the trigger, where the next message compacts", () => {
    expect(ringTone({ ...base, projectedTokens: TRIGGER - 1 })).toBe("amber");
    expect(ringTone({ ...base, projectedTokens: TRIGGER })).toBe("red");
  });

  it("turns red whenever the next message compacts first, however full the chat is", () => {
    expect(ringTone({ ...base, projectedTokens: 500, compactsNext: true })).toBe("red");
  });

  it("stays grey when the window is only a guess", () => {
    expect(ringTone({ ...base, projectedTokens: TRIGGER, source: "default" })).toBe("unknown");
  });
});
