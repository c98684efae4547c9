import { APICallError } from "@ai-sdk/provider";

/**
 * Recognizing "the prompt is too long" across providers (DESIGN §10). Each
 * pattern is a phrase a provider actually returns; anything else — auth,
 * rate limits, server errors, other bad requests — is not an overflow.
 */
const OVERFLOW_PATTERNS: Array<{ provider: string; pattern: RegExp }> = [
  // OpenAI, Azure, Groq, DeepSeek: the error code, and the message text.
  { provider: "openai", pattern: /context_length_exceeded/i },
  // OpenAI, vLLM, OpenRouter, Together, Fireworks: "This model's maximum context length is N tokens".
  { provider: "openai-compatible", pattern: /maximum context length/i },
  // vLLM: "The decoder prompt (length 9000) is longer than the maximum model length of 8192".
  { provider: "vllm", pattern: /longer than the maximum model length/i },
  // Anthropic: "prompt is too long: 208310 tokens > 200000 maximum"; and a prompt that fits
  // only without the reply's room: "input length and `max_tokens` exceed context limit:
  // 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again".
  { provider: "anthropic", pattern: /prompt is too long|exceed context limit/i },
  // Google Gemini: "The input token count (1234567) exceeds the maximum number of tokens allowed (1048576)".
  { provider: "google", pattern: /exceeds the maximum number of tokens/i },
  // Amazon Bedrock: "Input is too long for requested model".
  { provider: "bedrock", pattern: /input is too long/i },
  // llama.cpp server (and Ollama behind it): "the request exceeds the available context size".
  {
    provider: "llama.cpp",
    pattern: /exceeds? the available context size|exceed_context_size_error/i,
  },
  // Ollama: "input length exceeds the context length" / "prompt too long".
  { provider: "ollama", pattern: /exceeds? (the )?(maximum )?context length|prompt too long/i },
  // Mistral: "Prompt contains 40000 tokens, too large for model with 32768 maximum context length".
  { provider: "mistral", pattern: /too large for model with \d+ maximum context length/i },
  // OpenRouter's own wording when it trims nothing: "context length of this model".
  { provider: "openrouter", pattern: /exceeds? the context (window|length) of this model/i },
  // LM Studio: "Trying to keep the first 15857 tokens when context the overflows. However, the
  // model is loaded with context length of only 4096 tokens, which is not enough.", and newer
  // builds: "The number of tokens to keep from the initial prompt is greater than the context
  // length (n_keep: 5228 >= n_ctx: 4096)."
  {
    provider: "lmstudio",
    pattern:
      /loaded with context length of only|tokens to keep from the initial prompt is greater than the context length/i,
  },
  // SGLang: "Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens)",
  // "The input (9000 tokens) is longer than the model's context length (8192 tokens)."
  {
    provider: "sglang",
    pattern:
      /\(\d+ tokens\) exceeds the maximum allowed length|longer than the model'?s context length/i,
  },
  // xAI: "This model's maximum prompt length is 131072 but the request contains 140000 tokens."
  { provider: "xai", pattern: /maximum prompt length is \d+/i },
  // Hugging Face TGI (HTTP 422): "Input validation error: `inputs` tokens + `max_new_tokens`
  // must be <= 4096. Given: 4000 `inputs` tokens and 500 `max_new_tokens`".
  { provider: "tgi", pattern: /inputs`? tokens \+ `?max_new_tokens`? must be/i },
];

/** 422 is TGI's status for a prompt too long; it counts only with one of the phrases above. */
const OVERFLOW_STATUSES = new Set([400, 413, 422]);

function errorText(error: APICallError): string {
  return `${error.message}\n${error.responseBody ?? ""}`;
}

/** True when a provider rejected the request because the prompt does not fit its window. */
export function isContextOverflowError(error: unknown): error is APICallError {
  if (!APICallError.isInstance(error)) return false;
  const status = error.statusCode;
  if (status === undefined || !OVERFLOW_STATUSES.has(status)) return false;
  // A bare 413 "payload too large" is an overflow whatever its body says.
  if (status === 413) return true;
  const text = errorText(error);
  return OVERFLOW_PATTERNS.some(({ pattern }) => pattern.test(text));
}

/**
 * A refusal that came inside a stream already opened with a 200 (a proxy that opened it before
 * its upstream refused), as the error part the provider's stream carries: the parsed error event,
 * or the error reading it. When it says the prompt is too long it is that refusal, read as the
 * 400 it stands for; anything else is not an overflow.
 */
export function overflowInStream(error: unknown): APICallError | null {
  const text = error instanceof Error ? error.message : (JSON.stringify(error) ?? "");
  if (!OVERFLOW_PATTERNS.some(({ pattern }) => pattern.test(text))) return null;
  return new APICallError({
    message: text,
    url: "",
    requestBodyValues: undefined,
    statusCode: 400,
    responseBody: text,
    isRetryable: false,
    cause: error,
  });
}

/**
 * The provider's own count of the rejected prompt, when its message states it
 * ("resulted in 9100 tokens", "208310 tokens > 200000", "(length 9000)", "request (9412
 * tokens) exceeds", "your request has 9412 input tokens").
 */
export function reportedPromptTokens(error: APICallError): number | null {
  const text = errorText(error);
  // OpenRouter: "you requested about 40000 tokens (7232 of text input, 1000 of tool input,
  // 32768 in the output)": the prompt is the input parts, not what was asked in all.
  const parts = /\((\d+) of text input(?:, (\d+) of tool input)?, \d+ in the output\)/i.exec(text);
  if (parts?.[1]) return Number(parts[1]) + Number(parts[2] ?? 0);
  const patterns = [
    /resulted in (\d+) tokens/i,
    /(\d+) in the messages/i,
    /(\d+) in your prompt/i,
    /you requested (?:about )?(\d+) tokens/i,
    /prompt is too long: (\d+) tokens/i,
    /input token count \((\d+)\)/i,
    /prompt \(length (\d+)\)/i,
    /prompt contains (\d+) tokens/i,
    /exceed context limit: (\d+) \+/i,
    /keep the first (\d+) tokens/i,
    /n_keep: (\d+)/i,
    /input length \((\d+) tokens\)/i,
    /the input \((\d+) tokens\)/i,
    /request contains (\d+) tokens/i,
    /given: (\d+) `?inputs`? tokens/i,
    // llama.cpp: "request (9412 tokens) exceeds the available context size", and its field.
    /request \((\d+) tokens\) exceeds/i,
    /"n_prompt_tokens"\s*:\s*(\d+)/,
    // vLLM: "However, your request has 9412 input tokens."
    /your request has (\d+) input tokens/i,
  ];
  for (const pattern of patterns) {
    const match = pattern.exec(text);
    if (match?.[1]) return Number(match[1]);
  }
  return null;
}

/**
 * The window the provider states in its refusal ("maximum context length is 8192 tokens",
 * "200000 maximum", "loaded with context length of only 4096"), when it states one: what the
 * server runs the model with now, which a server restarted with a smaller context no longer
 * agrees on with the window Fold looked up.
 */
export function reportedWindowTokens(error: APICallError): number | null {
  const text = errorText(error);
  const patterns = [
    /maximum context length is (\d+)/i,
    /maximum model length of (\d+)/i,
    /tokens > (\d+) maximum/i,
    /> (\d+), decrease input length/i,
    /maximum number of tokens allowed \((\d+)\)/i,
    /"?n_ctx"?\s*:\s*(\d+)/,
    /available context size \((\d+) tokens\)/i,
    /model with (\d+) maximum context length/i,
    /context length of only (\d+)/i,
    /maximum allowed length \((\d+) tokens\)/i,
    /model'?s context length \((\d+) tokens\)/i,
    /maximum prompt length is (\d+)/i,
    /must be <= (\d+)/i,
  ];
  for (const pattern of patterns) {
    const value = Number(pattern.exec(text)?.[1] ?? Number.NaN);
    if (Number.isSafeInteger(value) && value > 0) return value;
  }
  return null;
}

/** Thrown when recovery trimmed and retried once and the provider still refused. */
export class ContextOverflowError extends Error {
  readonly modelId: string;
  constructor(modelId: string, options?: { cause?: unknown }) {
    super(`This conversation no longer fits ${modelId} — compact it or start a new chat.`, options);
    this.name = "ContextOverflowError";
    this.modelId = modelId;
  }

  static isInstance(error: unknown): error is ContextOverflowError {
    return error instanceof Error && error.name === "ContextOverflowError";
  }
}
