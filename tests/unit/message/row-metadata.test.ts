import { describe, expect, it } from "vitest";
import { isPinnedByUser } from "@/lib/message/pins";
import { rowToUIMessage } from "@/lib/message/ui-message";

const row = (metadata: unknown) => ({
  id: "m1",
  role: "user" as const,
  parts: [{ type: "text", text: "remember this" }],
  metadata,
});

describe("rowToUIMessage metadata", () => {
  it("keeps the fields that parse when one does not (a pin survives a bad stat)", () => {
    const message = rowToUIMessage(row({ pinned: true, toolDurationsMs: { call1: -3 } }));
    expect(message.metadata).toEqual({ pinned: true });
    expect(isPinnedByUser(message.metadata)).toBe(true);
  });

  it("reads well-formed metadata whole, and none from a row without an object", () => {
    expect(rowToUIMessage(row({ pinned: true, stopped: true })).metadata).toEqual({
      pinned: true,
      stopped: true,
    });
    expect(rowToUIMessage(row(null)).metadata).toEqual({});
    expect(rowToUIMessage(row("not metadata")).metadata).toBeUndefined();
  });
});
