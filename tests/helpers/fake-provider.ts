import {
  type FakeOpenAI,
  type StartFakeOpenAIOptions,
  startFakeOpenAI,
} from "../fixtures/fake-openai/server";

/**
 * The fake OpenAI-compatible server as Fold's provider in an integration test: started, and
 * named in the environment Fold reads when it loads, with no demo model unless `env` says
 * otherwise. Call it inside `vi.hoisted`, so it runs before Fold's modules are imported.
 */
export async function startFakeProvider(
  options: StartFakeOpenAIOptions,
  env: Record<string, string> = {},
): Promise<FakeOpenAI> {
  const server = await startFakeOpenAI(options);
  Object.assign(process.env, {
    OPENAI_COMPATIBLE_BASE_URL: server.url,
    OPENAI_COMPATIBLE_NAME: "fake",
    DEMO_MODEL: "never",
    ...env,
  });
  return server;
}

/**
 * The provider most compaction tests use: one model, `small`, with a 4,096-token window that
 * a few long turns fill, 120-token replies, and the summarizer answering at once.
 */
export const SMALL_WINDOW = {
  models: [{ id: "small", maxModelLen: 4096 }],
  replyTokens: 120,
} satisfies StartFakeOpenAIOptions;
