import { describe, expect, it } from "vitest";
import { usageText } from "@/components/admin/user-row";

describe("Admin → Users: today's use", () => {
  it("reads against its limit, or says there is none after the count", () => {
    expect(usageText(16, 100, "messages")).toBe("16 / 100 messages");
    expect(usageText(66_275, null, "tokens")).toBe("66,275 tokens (no limit)");
  });
});
