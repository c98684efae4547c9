import { startFakeOpenAI } from "../fixtures/fake-openai/server";
import type { Benchmark } from "./benchmark";
import { configureFold } from "./fold-env";

/**
 * `security`: the security suite's two sweeps, counted. Every state-changing route under
 * app/api (read from the filesystem) gets every forged cross-site request; then at least
 * 5,000 generated requests go to every route. Targets: no forged request accepted, no 5xx.
 */

const MIN_FUZZ_CASES = 5_000;
const SEED = 20_261_126;
const PROVIDER = "fake";
const MODEL = "fake-model";

export const benchmark: Benchmark = {
  name: "security",
  async run(context) {
    const fake = await startFakeOpenAI({
      models: [{ id: MODEL, maxModelLen: 8192 }],
      chunkDelayMs: 0,
    });
    // Fold reads process.env once per process: set before any Fold module loads.
    configureFold(fake.url, PROVIDER);
    const { openBenchDatabase } = await import("./database");
    const { apiRoutes } = await import("../helpers/api-routes");
    const { fuzzFixtures, fuzzTargets, runFuzz } = await import("../helpers/fuzz-api");
    const { attackEndpoint, CSRF_ATTACKS, foldEndpoints } = await import("../helpers/security");
    const bench = await openBenchDatabase();
    try {
      const routes = await apiRoutes();
      const fixtures = await fuzzFixtures(bench.database, `${PROVIDER}:${MODEL}`);

      const endpoints = foldEndpoints(routes);
      let accepted = 0;
      for (const endpoint of endpoints) {
        const outcomes = await attackEndpoint(bench.database, endpoint, {
          browser: fixtures.admin,
          values: { id: fixtures.chatId },
          body: endpoint.method === "DELETE" ? undefined : {},
        });
        accepted += outcomes.filter(
          (o) => o.status !== 403 || o.code !== "forbidden:origin" || o.wrote,
        ).length;
      }

      const targets = fuzzTargets(routes);
      const started = performance.now();
      const report = await runFuzz(fixtures, targets, {
        casesPerTarget: Math.ceil(MIN_FUZZ_CASES / targets.length),
        seed: SEED,
      });
      const seconds = (performance.now() - started) / 1000;

      context.note(
        "security.csrf_routes_checked",
        `state-changing (route, method) pairs found under app/api, better-auth's own excluded; ${CSRF_ATTACKS.length} forged requests each (foreign, look-alike, other-scheme and null Origin; foreign or no Referer; a form's content type)`,
      );
      context.note(
        "security.csrf_accepted",
        "forged requests not answered 403 forbidden:origin, or that changed a row (target 0)",
      );
      context.note(
        "security.fuzz_cases",
        `generated requests (fast-check, seed ${SEED}) over ${targets.length} (route, method) pairs on ${bench.label}, ${seconds.toFixed(0)} s; statuses ${JSON.stringify(report.statuses)}`,
      );
      context.note("security.fuzz_5xx", "answers of 500 or more (target 0)");
      context.note(
        "security.fuzz_partial_writes",
        "refused requests (4xx) after which a user's rows had changed (target 0)",
      );
      return {
        "security.csrf_routes_checked": endpoints.length,
        "security.csrf_accepted": accepted,
        "security.fuzz_cases": report.cases,
        "security.fuzz_5xx": report.fiveXx,
        "security.fuzz_partial_writes": report.partialWrites,
      };
    } finally {
      await bench.dispose();
      await fake.close();
    }
  },
};
