import { describe, expect, it } from "vitest";
import { outputLimitText } from "@/components/admin/window-cells";

describe("Admin → Models: a model's max output", () => {
  it("is the model's limit when the window keeps it free", () => {
    expect(outputLimitText(128_000, 16_384)).toEqual({ tokens: "16,384", note: null });
    expect(outputLimitText(128_000, null)).toEqual({ tokens: "—", note: null });
  });

  it("under a window too small for it is what a reply keeps, with the model's limit beside", () => {
    // An override of 16,000 tokens on a model that may write 16,384: no reply gets more than half.
    expect(outputLimitText(16_000, 16_384)).toEqual({
      tokens: "8,000",
      note: "of 16,384: a reply keeps at most half the window",
    });
  });
});
