/**
 * Words for a resolved window (issue 15): what the ring's hover card, Admin → Models and the
 * truncation trace say about where a number came from. Pure and free of server imports, so
 * the browser renders the same sentences the server writes.
 */
import type { ChainWindow, ContextWindow, ServerKind, WindowDetail } from "./window-types";

export const SERVER_NAMES: Record<ServerKind, string> = {
  ollama: "Ollama",
  "llama.cpp": "llama.cpp",
  "lm-studio": "LM Studio",
  vllm: "vLLM",
  openrouter: "OpenRouter",
  google: "Google",
  demo: "Demo",
};

/** One of the three windows Admin → Models shows side by side, and who said it. */
export type WindowLayer = { tokens: number; from: string };

const n = (tokens: number) => tokens.toLocaleString("en-US");

/** The provider's number in a few words: "Ollama, loaded at 4,096". */
function providerPhrase(detail: WindowDetail | undefined, tokens: number): string {
  if (!detail) return `provider API, ${n(tokens)}`;
  const server = SERVER_NAMES[detail.server];
  switch (detail.basis) {
    case "loaded":
      return `${server}, loaded at ${n(tokens)}`;
    case "num_ctx":
      return `${server}, num_ctx ${n(tokens)}`;
    case "last_loaded":
      return `${server}, loaded at ${n(tokens)} when last used (not loaded now)`;
    case "assumed":
      return `${server} default ${n(tokens)} (assumed: server default)`;
    case "trained":
      return `${server}, trained length ${n(tokens)}`;
    case "listed":
      return `${server} API, ${n(tokens)}`;
  }
}

/** What the chain (without override or observation) says: "Ollama, trained length 131,072". */
export function describeChain(chain: ChainWindow): string {
  switch (chain.source) {
    case "provider":
      return providerPhrase(chain.detail, chain.contextWindow);
    case "catalog":
      return `model catalog${chain.matchedId ? ` (${chain.matchedId})` : ""}, ${n(chain.contextWindow)}`;
    case "default":
      return `window unknown (default ${n(chain.contextWindow)})`;
  }
}

/**
 * The window in use, for the ring's hover card: "Ollama, loaded at 4,096 — the model supports
 * 131,072"; an observed window says what the server kept and what it was believed to hold.
 */
export function describeWindow(window: ContextWindow): string {
  if (window.source === "override") return `admin override, ${n(window.contextWindow)}`;
  if (window.source === "observed") {
    const believed = window.chain ? ` — Fold had ${describeChain(window.chain)}` : "";
    return `observed: the server kept ${n(window.contextWindow)} tokens of a longer prompt${believed}`;
  }
  const phrase = describeChain({ ...window, source: window.source });
  const trained = window.trainedWindow;
  return trained && trained > window.contextWindow
    ? `${phrase} — the model supports ${n(trained)}`
    : phrase;
}

/** The trained and the loaded window the chain knows of, each with who said it. */
export function windowLayers(chain: ChainWindow): {
  trained: WindowLayer | null;
  loaded: WindowLayer | null;
} {
  const detail = chain.detail;
  if (chain.source === "catalog") {
    return { trained: { tokens: chain.contextWindow, from: describeChain(chain) }, loaded: null };
  }
  if (chain.source !== "provider" || !detail) return { trained: null, loaded: null };
  const server = SERVER_NAMES[detail.server];
  const runsWith =
    detail.basis === "trained" || (detail.basis === "listed" && detail.server !== "vllm")
      ? null
      : { tokens: chain.contextWindow, from: providerPhrase(detail, chain.contextWindow) };
  const trainedTokens = chain.trainedWindow ?? (runsWith ? null : chain.contextWindow);
  return {
    trained:
      trainedTokens === null
        ? null
        : { tokens: trainedTokens, from: `${server}, model's trained length` },
    loaded: runsWith,
  };
}

/** How to give a model on this server the window it was meant to have. */
export function truncationFix(server: ServerKind | undefined): string {
  const override = "or set a window override in Admin → Models";
  switch (server) {
    case "ollama":
      return `Raise OLLAMA_CONTEXT_LENGTH on the Ollama server or num_ctx in the model's Modelfile, ${override}.`;
    case "lm-studio":
      return `Reload the model in LM Studio with a larger context length, ${override}.`;
    case "llama.cpp":
      return `Restart llama.cpp's server with a larger --ctx-size (or fewer --parallel slots), ${override}.`;
    default:
      return `Raise OLLAMA_CONTEXT_LENGTH or num_ctx (Ollama), reload the model with a larger context (LM Studio, llama.cpp), ${override}.`;
  }
}
