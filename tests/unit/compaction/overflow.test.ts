import { APICallError } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import {
  isContextOverflowError,
  reportedPromptTokens,
  reportedWindowTokens,
} from "@/lib/compaction/overflow";

function apiError(statusCode: number, responseBody: string, message = "Bad Request"): APICallError {
  return new APICallError({
    message,
    url: "https://provider.example/v1/chat/completions",
    requestBodyValues: {},
    statusCode,
    responseBody,
    isRetryable: statusCode >= 500 || statusCode === 429,
  });
}

// One real-shaped error body per provider (DESIGN §10).
const OVERFLOWS: Array<[string, number, string]> = [
  [
    "OpenAI",
    400,
    JSON.stringify({
      error: {
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.",
        type: "invalid_request_error",
        param: "messages",
        code: "context_length_exceeded",
      },
    }),
  ],
  [
    "vLLM",
    400,
    JSON.stringify({
      object: "error",
      message:
        "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
      type: "BadRequestError",
      param: null,
      code: 400,
    }),
  ],
  [
    "vLLM (decoder prompt)",
    400,
    JSON.stringify({
      object: "error",
      message:
        "The decoder prompt (length 9000) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens.",
      type: "BadRequestError",
      code: 400,
    }),
  ],
  [
    "Anthropic",
    400,
    JSON.stringify({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: "prompt is too long: 208310 tokens > 200000 maximum",
      },
    }),
  ],
  [
    "Google",
    400,
    JSON.stringify({
      error: {
        code: 400,
        message:
          "The input token count (1234567) exceeds the maximum number of tokens allowed (1048576).",
        status: "INVALID_ARGUMENT",
      },
    }),
  ],
  ["Bedrock", 400, JSON.stringify({ message: "Input is too long for requested model." })],
  [
    "llama.cpp",
    400,
    JSON.stringify({
      error: {
        code: 400,
        message: "the request exceeds the available context size, try increasing it",
        type: "exceed_context_size_error",
        n_prompt_tokens: 9120,
        n_ctx: 8192,
      },
    }),
  ],
  [
    "llama.cpp (its count in the message)",
    400,
    JSON.stringify({
      error: {
        code: 400,
        message:
          "request (9412 tokens) exceeds the available context size (8192 tokens), try increasing it",
        type: "exceed_context_size_error",
      },
    }),
  ],
  [
    "vLLM (input tokens)",
    400,
    JSON.stringify({
      object: "error",
      message:
        "This model's maximum context length is 8192 tokens. However, your request has 9412 input tokens. Please reduce the length of the input messages.",
      type: "BadRequestError",
      param: null,
      code: 400,
    }),
  ],
  ["Ollama", 400, JSON.stringify({ error: "input length exceeds the context length" })],
  [
    "OpenRouter",
    400,
    JSON.stringify({
      error: {
        message:
          "This endpoint's maximum context length is 128000 tokens. However, you requested about 140000 tokens (139000 of text input, 1000 in the output). Please reduce the length of either one.",
        code: 400,
      },
    }),
  ],
  [
    "Mistral",
    400,
    JSON.stringify({
      object: "error",
      message:
        "Prompt contains 40000 tokens, too large for model with 32768 maximum context length",
      type: "invalid_request_error",
    }),
  ],
  ["generic 413", 413, "<html><body>413 Request Entity Too Large</body></html>"],
  [
    "Anthropic (the reply's room)",
    400,
    JSON.stringify({
      type: "error",
      error: {
        type: "invalid_request_error",
        message:
          "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again",
      },
    }),
  ],
  [
    "LM Studio",
    400,
    JSON.stringify({
      error:
        "Trying to keep the first 15857 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input",
    }),
  ],
  [
    "SGLang",
    400,
    JSON.stringify({
      object: "error",
      message:
        "Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens). Use a shorter input or enable --allow-auto-truncate.",
      type: "BadRequestError",
      code: 400,
    }),
  ],
  [
    "SGLang (context length)",
    400,
    JSON.stringify({
      object: "error",
      message: "The input (9000 tokens) is longer than the model's context length (8192 tokens).",
      type: "BadRequestError",
      code: 400,
    }),
  ],
  [
    "xAI",
    400,
    JSON.stringify({
      code: "Client specified an invalid argument",
      error: "This model's maximum prompt length is 131072 but the request contains 140000 tokens.",
    }),
  ],
  [
    "Hugging Face TGI",
    422,
    JSON.stringify({
      error:
        "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 500 `max_new_tokens`",
      error_type: "validation",
    }),
  ],
  [
    "LM Studio (tokens to keep)",
    400,
    JSON.stringify({
      error:
        "The number of tokens to keep from the initial prompt is greater than the context length (n_keep: 5228 >= n_ctx: 4096). Try to load the model with a larger context length, or provide a shorter input.",
    }),
  ],
  [
    "OpenRouter (tool input)",
    400,
    JSON.stringify({
      error: {
        message:
          "This endpoint's maximum context length is 256000 tokens. However, you requested about 424983 tokens (358454 of text input, 56529 of tool input, 10000 in the output). Please reduce the length of either one.",
        code: 400,
      },
    }),
  ],
];

const NOT_OVERFLOWS: Array<[string, number, string]> = [
  [
    "401 unauthorized",
    401,
    JSON.stringify({ error: { message: "Incorrect API key provided", code: "invalid_api_key" } }),
  ],
  [
    "429 rate limit",
    429,
    JSON.stringify({
      error: { message: "Rate limit reached for requests", code: "rate_limit_exceeded" },
    }),
  ],
  [
    "500 server error",
    500,
    JSON.stringify({
      error: { message: "The server had an error while processing your request." },
    }),
  ],
  [
    "503 with a context phrase",
    503,
    JSON.stringify({ error: { message: "maximum context length service overloaded" } }),
  ],
  [
    "400 bad temperature",
    400,
    JSON.stringify({
      error: {
        message: "Invalid value for 'temperature': must be between 0 and 2.",
        code: "invalid_value",
      },
    }),
  ],
  [
    "400 unknown model",
    400,
    JSON.stringify({
      error: { message: "The model `gpt-9` does not exist", code: "model_not_found" },
    }),
  ],
  [
    "400 a field too long",
    400,
    JSON.stringify({
      error: { message: "Field 'user' exceeds the maximum allowed length (64 characters)." },
    }),
  ],
  [
    "422 bad parameter",
    422,
    JSON.stringify({
      error: "Input validation error: `temperature` must be strictly positive",
      error_type: "validation",
    }),
  ],
  [
    "400 bad tool schema",
    400,
    JSON.stringify({
      error: {
        message: "Invalid schema for function 'fetch_url'",
        code: "invalid_function_parameters",
      },
    }),
  ],
];

describe("overflow detection", () => {
  for (const [name, status, body] of OVERFLOWS) {
    it(`recognizes ${name}'s overflow error`, () => {
      expect(isContextOverflowError(apiError(status, body))).toBe(true);
    });
  }
  for (const [name, status, body] of NOT_OVERFLOWS) {
    it(`does not mistake a ${name} for an overflow`, () => {
      expect(isContextOverflowError(apiError(status, body))).toBe(false);
    });
  }

  it("ignores errors that are not provider call errors", () => {
    expect(isContextOverflowError(new Error("prompt is too long"))).toBe(false);
  });

  it("reads the provider's own count of the rejected prompt", () => {
    expect(reportedPromptTokens(apiError(400, OVERFLOWS[0]?.[2] ?? ""))).toBe(131072);
    expect(reportedPromptTokens(apiError(400, OVERFLOWS[1]?.[2] ?? ""))).toBe(8000);
    expect(reportedPromptTokens(apiError(400, OVERFLOWS[3]?.[2] ?? ""))).toBe(208310);
    expect(reportedPromptTokens(apiError(400, OVERFLOWS[4]?.[2] ?? ""))).toBe(1234567);
    expect(reportedPromptTokens(apiError(400, OVERFLOWS[5]?.[2] ?? ""))).toBeNull();
    const reported = (name: string) => {
      const [, status, body] = OVERFLOWS.find(([n]) => n === name) ?? [];
      return reportedPromptTokens(apiError(status ?? 400, body ?? ""));
    };
    expect(reported("Anthropic (the reply's room)")).toBe(178959);
    expect(reported("LM Studio")).toBe(15857);
    expect(reported("SGLang")).toBe(160062);
    expect(reported("SGLang (context length)")).toBe(9000);
    expect(reported("xAI")).toBe(140000);
    expect(reported("Hugging Face TGI")).toBe(4000);
    expect(reported("llama.cpp")).toBe(9120);
    expect(reported("llama.cpp (its count in the message)")).toBe(9412);
    expect(reported("vLLM (input tokens)")).toBe(9412);
    // What it asked to keep of the prompt, and the prompt alone (not the output asked for too).
    expect(reported("LM Studio (tokens to keep)")).toBe(5228);
    expect(reported("OpenRouter")).toBe(139000);
    expect(reported("OpenRouter (tool input)")).toBe(358454 + 56529);
  });

  it("reads the window the provider states, where it states one", () => {
    const stated = (name: string) => {
      const [, status, body] = OVERFLOWS.find(([n]) => n === name) ?? [];
      return reportedWindowTokens(apiError(status ?? 400, body ?? ""));
    };
    expect(Object.fromEntries(OVERFLOWS.map(([name]) => [name, stated(name)]))).toEqual({
      OpenAI: 128000,
      vLLM: 8192,
      "vLLM (decoder prompt)": 8192,
      Anthropic: 200000,
      Google: 1048576,
      Bedrock: null,
      "llama.cpp": 8192,
      "llama.cpp (its count in the message)": 8192,
      "vLLM (input tokens)": 8192,
      Ollama: null,
      OpenRouter: 128000,
      Mistral: 32768,
      "generic 413": null,
      "Anthropic (the reply's room)": 200000,
      "LM Studio": 4096,
      SGLang: 59862,
      "SGLang (context length)": 8192,
      xAI: 131072,
      "Hugging Face TGI": 4096,
      "LM Studio (tokens to keep)": 4096,
      "OpenRouter (tool input)": 256000,
    });
  });
});
