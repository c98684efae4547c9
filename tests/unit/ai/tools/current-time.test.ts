import { describe, expect, it } from "vitest";
import { createCurrentTimeTool, currentTime } from "@/lib/ai/tools/current-time";

const instant = new Date("2024-03-15T12:30:45.678Z");
const clock = () => instant;

describe("currentTime", () => {
  it("formats a fixed clock in the requested zone with its offset", () => {
    const tokyo = currentTime("Asia/Tokyo", clock);
    expect(tokyo.iso).toBe("2024-03-15T21:30:45.678+09:00");
    expect(tokyo.timeZone).toBe("Asia/Tokyo");
    expect(tokyo.unixMs).toBe(instant.getTime());
    expect(tokyo.formatted).toMatch(/^Friday, March 15, 2024 at 9:30:45\sPM GMT\+9$/);
  });

  it.each([
    ["America/New_York", "2024-03-15T08:30:45.678-04:00"], // daylight time started 10 March
    ["America/St_Johns", "2024-03-15T10:00:45.678-02:30"],
    ["Asia/Kolkata", "2024-03-15T18:00:45.678+05:30"],
    ["Europe/Lisbon", "2024-03-15T12:30:45.678Z"],
  ])("computes the local time and offset in %s", (zone, iso) => {
    expect(currentTime(zone, clock).iso).toBe(iso);
  });

  it("defaults to UTC and canonicalizes zone names", () => {
    const utc = currentTime(undefined, clock);
    expect(utc.timeZone).toBe("UTC");
    expect(utc.iso).toBe(instant.toISOString());
    expect(currentTime("europe/lisbon", clock).timeZone).toBe("Europe/Lisbon");
  });

  it.each(["Mars/Olympus_Mons", "", "UTC+25"])("rejects the unknown zone %j", (zone) => {
    expect(() => currentTime(zone, clock)).toThrow(`Unknown time zone "${zone}"`);
  });

  it("reads the injected clock on every call through the tool", async () => {
    let now = instant;
    const tool = createCurrentTimeTool({ now: () => now });
    const options = { toolCallId: "call-1", messages: [], context: {} };
    const first = await tool.execute({ timeZone: "UTC" }, options);
    now = new Date(instant.getTime() + 60_000);
    const second = await tool.execute({}, options);
    expect(first).toMatchObject({ iso: "2024-03-15T12:30:45.678Z", timeZone: "UTC" });
    expect(second).toMatchObject({ iso: "2024-03-15T12:31:45.678Z", timeZone: "UTC" });
  });
});
