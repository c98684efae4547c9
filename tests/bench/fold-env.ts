/** The secret every in-process benchmark signs its sessions with. */
export const BENCH_AUTH_SECRET = "bench-secret-bench-secret-bench-secret-0123";

/**
 * Points Fold at a fake OpenAI-compatible provider named `provider`, with the demo model off
 * and logging silent, plus whatever else a benchmark needs. Fold reads process.env once per
 * process: call this before any Fold module loads.
 */
export function configureFold(
  providerUrl: string,
  provider: string,
  extra: Record<string, string> = {},
): void {
  Object.assign(process.env, {
    OPENAI_COMPATIBLE_BASE_URL: providerUrl,
    OPENAI_COMPATIBLE_NAME: provider,
    DEMO_MODEL: "never",
    LOG_LEVEL: "silent",
    BETTER_AUTH_SECRET: BENCH_AUTH_SECRET,
    ...extra,
  });
}
