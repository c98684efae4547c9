import { afterAll, expect, it, vi } from "vitest";

// A llama.cpp-like server whose streamed answers fail after it answered 200: `body.sse` is what
// the next one sends.
const { stub, body } = await vi.hoisted(async () => {
  const { startStreamStub } = await import("../../helpers/stream-stub");
  const body = { sse: "" };
  const stub = await startStreamStub("qwen3-8b", () => body.sse);
  Object.assign(process.env, {
    OPENAI_COMPATIBLE_BASE_URL: stub.url,
    OPENAI_COMPATIBLE_NAME: "llamacpp",
    DEMO_MODEL: "never",
  });
  return { stub, body };
});

import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { newChat, sendTurn } from "../../helpers/turns";

afterAll(() => stub.close());

/** The turn's error texts when the server answers `sse`. */
async function errorsOf(database: Parameters<typeof register>[0], sse: string) {
  body.sse = sse;
  const { browser } = await register(database, `stream-error-${crypto.randomUUID()}@example.com`);
  const chatId = await newChat(database, browser);
  const { response, chunks } = await sendTurn(database, browser, {
    chatId,
    modelId: "llamacpp:qwen3-8b",
    text: "hello",
  });
  expect(response.status).toBe(200);
  return (
    chunks.filter((c) => (c as { type: string }).type === "error") as Array<{
      errorText: string;
    }>
  ).map((c) => c.errorText);
}

describeEachDriver("a provider's error inside its 200 stream", (use) => {
  it("is shown in the provider's words, not as a failure of Fold's own", async () => {
    // The standard frame, as current llama.cpp, vLLM and Ollama send it.
    const frame = {
      error: {
        code: 400,
        message: "Failed to parse tool call arguments as JSON",
        type: "invalid_request_error",
      },
    };
    expect(await errorsOf(use(), `data: ${JSON.stringify(frame)}\n\ndata: [DONE]\n\n`)).toEqual([
      `The model provider stopped the reply with an error (400): ${frame.error.message}`,
    ]);
  });

  it("is recovery's when it says the prompt is too long: one trimmed retry, then the chat no longer fits", async () => {
    const frame = {
      error: {
        code: 400,
        message:
          "request (9412 tokens) exceeds the available context size (8192 tokens), try increasing it",
        type: "exceed_context_size_error",
      },
    };
    const asked = stub.requests;
    // This server refuses every request so, the trimmed retry as well.
    expect(await errorsOf(use(), `data: ${JSON.stringify(frame)}\n\ndata: [DONE]\n\n`)).toEqual([
      "This conversation no longer fits llamacpp:qwen3-8b — compact it or start a new chat.",
    ]);
    expect(stub.requests - asked).toBe(2);
  });

  it("says the provider's stream ended early when its error cannot be read", async () => {
    // Some 2025 llama.cpp builds: a non-standard `error:` field, then [DONE].
    const unread = `error: ${JSON.stringify({ code: 400, message: "the request exceeds the available context size" })}\n\ndata: [DONE]\n\n`;
    const [text, ...rest] = await errorsOf(use(), unread);
    expect(rest).toEqual([]);
    expect(text).toMatch(/^The model provider's reply ended before it finished/);
    expect(text).not.toMatch(/Fold's side/);
  });
});
