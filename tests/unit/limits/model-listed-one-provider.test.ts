import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";

/**
 * Every turn checks that its model is listed. A second OpenAI-compatible server that accepts
 * connections and never answers (a machine asleep on the LAN, a wedged proxy) must not hold up
 * a turn on another provider: only the model's own provider's list is read.
 */

let hung: Server;
/** What the hung server was asked (it answers nothing). */
const asked: string[] = [];
beforeAll(async () => {
  hung = createServer((request) => {
    asked.push(request.url ?? "");
  });
  await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve));
  const { port } = hung.address() as AddressInfo;
  Object.assign(process.env, {
    OPENAI_API_KEY: "sk-test",
    OPENAI_COMPATIBLE_BASE_URL: `http://127.0.0.1:${port}/v1`,
    OPENAI_COMPATIBLE_NAME: "lan",
    DEMO_MODEL: "never",
  });
});
afterAll(async () => {
  hung.closeAllConnections();
  await new Promise<void>((resolve) => hung.close(() => resolve()));
});

it("admits a model without waiting on another provider that does not answer", async () => {
  const { assertModelListed } = await import("@/lib/limits/model-access");
  await expect(assertModelListed("openai:gpt-4o")).resolves.toEqual({
    provider: "openai",
    model: "gpt-4o",
  });
  // Its list was not asked for: waiting on it takes its whole timeout (seconds).
  expect(asked).toEqual([]);
});
