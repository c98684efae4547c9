import { afterAll, beforeAll, expect, it, vi } from "vitest";

// A real OpenAI-compatible server as the only provider, so a body that is valid runs a real turn.
const fake = await vi.hoisted(async () => {
  const { startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider({ models: [{ id: "fake-model", maxModelLen: 8192 }] });
});

import { apiRoutes } from "../../helpers/api-routes";
import { describeEachDriver } from "../../helpers/databases";
import { type FuzzFixtures, fuzzFixtures, fuzzTargets, runFuzz } from "../../helpers/fuzz-api";

/** The floor: at least this many generated requests per database driver. */
const MIN_CASES = 5_000;
/** Fixed so a failure can be replayed; FUZZ_SEED explores other cases. */
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_126);
const FUZZ_TIMEOUT_MS = 900_000;

const targets = fuzzTargets(await apiRoutes());
const casesPerTarget = Math.ceil(MIN_CASES / targets.length);

afterAll(() => fake.close());

describeEachDriver("API fuzz: generated requests to every route", (use) => {
  let fixtures: FuzzFixtures;

  beforeAll(async () => {
    fake.configure({ chunkDelayMs: 0 });
    fixtures = await fuzzFixtures(use(), "fake:fake-model");
  });

  it(
    `answers ${MIN_CASES}+ generated requests with no 5xx and writes nothing when it refuses`,
    async () => {
      const report = await runFuzz(fixtures, targets, { casesPerTarget, seed: SEED });
      console.info(`fuzz [${report.cases} cases] statuses: ${JSON.stringify(report.statuses)}`);
      expect(report.cases).toBeGreaterThanOrEqual(MIN_CASES);
      // The cases got past the origin gate: handlers accepted some and refused many for their content.
      expect(report.statuses[400]).toBeGreaterThan(MIN_CASES / 4);
      expect((report.statuses[200] ?? 0) + (report.statuses[201] ?? 0)).toBeGreaterThan(50);
      expect({ ...report, seed: SEED }).toMatchObject({
        fiveXx: 0,
        partialWrites: 0,
        failures: [],
      });
    },
    FUZZ_TIMEOUT_MS,
  );
});
