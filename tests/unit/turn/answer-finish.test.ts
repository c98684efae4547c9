import { expect, it } from "vitest";
import { noObservations, type TurnObservations } from "@/lib/turn/observe";
import { answeringModel, answerWith } from "./answer-harness";

/**
 * A turn's answer whose Stop lands the moment the model's stream has finished: as the turn
 * notes the finish, before the answer has written its finish chunk.
 */
async function answerStoppedAsItFinishes() {
  const stop = new AbortController();
  const observed: TurnObservations = noObservations();
  let finished = false;
  Object.defineProperty(observed, "finished", {
    get: () => finished,
    set: (value: boolean) => {
      finished = value;
      if (value) stop.abort();
    },
  });
  const chunks = await answerWith(answeringModel("All done."), {
    observed,
    stopSignal: stop.signal,
  });
  return { chunks, observed, stopped: stop.signal.aborted };
}

it("a Stop landing once the model has finished cuts nothing: the reply ends with its finish and stats", async () => {
  const { chunks, observed, stopped } = await answerStoppedAsItFinishes();
  expect(stopped).toBe(true);
  const finish = chunks.find((c) => c.type === "finish");
  expect(finish).toBeDefined();
  // The finished reply's own metadata (its stats), not a stopped one.
  expect(JSON.stringify(finish)).toContain('"stats"');
  expect(JSON.stringify(finish)).not.toContain('"stopped":true');
  expect(observed.stopped).toBeFalsy();
  expect(chunks.filter((c) => c.type === "text-delta").map((c) => c.delta)).toEqual(["All done."]);
});
