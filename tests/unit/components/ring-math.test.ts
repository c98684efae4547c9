import { describe, expect, it } from "vitest";
import { AMBER_SHARE_OF_TRIGGER, nextFoldText, ringTone } from "@/components/context/ring-math";

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

describe("nextFoldText", () => {
  const context = {
    compactionEnabled: true,
    compactsNext: false,
    projectedTokens: 3_000,
    contextWindow: 8_192,
    budget: { trigger: TRIGGER, triggerRaised: false },
  };

  it("says where the chat summarizes and how much room is left", () => {
    expect(nextFoldText(context)).toBe(
      "Older messages get summarized when this chat reaches 4,800 tokens (59\u00a0% of the window): room for about 1,800 more.",
    );
  });

  it("says why when the chat summarizes later than usual", () => {
    const raised = { ...context, budget: { trigger: 5_700, triggerRaised: true } };
    expect(nextFoldText(raised)).toMatch(
      /^Older messages get summarized when this chat reaches 5,700 tokens/,
    );
    expect(nextFoldText(raised)).toContain(
      "later than usual: pinned messages and the latest message",
    );
  });

  it("says the next message summarizes first, or that summarizing is off", () => {
    expect(nextFoldText({ ...context, compactsNext: true })).toMatch(/^Before your next message/);
    expect(nextFoldText({ ...context, compactionEnabled: false })).toBe(
      "Automatic summarizing is off on this server.",
    );
  });
});
