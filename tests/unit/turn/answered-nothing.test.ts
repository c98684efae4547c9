import { describe, expect, it } from "vitest";
import { answeredNothing, noObservations, type TurnObservations } from "@/lib/turn/observe";

const turn = (patch: Partial<TurnObservations>): TurnObservations => ({
  ...noObservations(),
  ...patch,
});

describe("whether a turn's message goes back to the day", () => {
  it("goes back when nothing answered it", () => {
    expect(answeredNothing(turn({ failedBeforeModel: true }), false)).toBe(true);
    expect(answeredNothing(turn({ stoppedBeforeModel: true, stopped: true }), false)).toBe(true);
    expect(answeredNothing(turn({ unstored: true }), false)).toBe(true);
    expect(answeredNothing(turn({ error: new Error("503") }), false)).toBe(true);
  });

  it("goes back when the chat was taken over before the model wrote anything", () => {
    expect(answeredNothing(turn({ leaseLost: true, stopped: true, aborted: true }), false)).toBe(
      true,
    );
  });

  it("stays spent for a reply stored, one the model began, or one the user stopped", () => {
    expect(answeredNothing(turn({ finished: true, steps: 1, firstTokenAt: 5 }), true)).toBe(false);
    expect(answeredNothing(turn({ leaseLost: true, stopped: true, firstTokenAt: 5 }), false)).toBe(
      false,
    );
    expect(answeredNothing(turn({ stopped: true, aborted: true }), false)).toBe(false);
    expect(answeredNothing(turn({ stopped: true, error: new Error("aborted") }), false)).toBe(
      false,
    );
  });
});
