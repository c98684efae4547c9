/**
 * The shapes of a resolved context window (DESIGN §6), kept apart from the resolver so the
 * browser (the ring, Admin → Models) can import them without pulling in the database.
 */

/** Where a window came from, in the chain's order; a `default` window shows a neutral ring. */
export type WindowSource = "override" | "observed" | "provider" | "catalog" | "default";

/** Which kind of server answered for a provider window. */
export type ServerKind =
  | "ollama"
  | "llama.cpp"
  | "lm-studio"
  | "vllm"
  | "openrouter"
  | "google"
  | "demo";

/**
 * How the server's number was found: the context it runs the model with (`loaded`), the
 * Modelfile's `num_ctx`, its default for a model not loaded yet (`assumed`), the length the
 * model was trained for (`trained`), or a model list that publishes one number (`listed`).
 */
export type WindowBasis =
  | "loaded"
  | "num_ctx"
  /** Not loaded now; loaded at this the last time Fold asked (it loads the same way again). */
  | "last_loaded"
  | "assumed"
  | "trained"
  | "listed";

export type WindowDetail = {
  server: ServerKind;
  basis: WindowBasis;
  /**
   * The server said the model is not loaded: it will run with a context Fold cannot know yet
   * (LM Studio loads at its own default on first use), so the window is a guess.
   */
  notLoaded?: true;
};

/** What a provider's own API says about one model. */
export type ProviderWindow = {
  contextWindow: number;
  maxOutputTokens: number | null;
  detail?: WindowDetail;
  /** The model's trained window, when the server told it (it may equal `contextWindow`). */
  trainedWindow?: number;
};

/** What the chain gives without an override or an observation. */
export type ChainWindow = ProviderWindow & {
  source: "provider" | "catalog" | "default";
  /** The catalog entry behind a `catalog` window, e.g. `openai:gpt-4o`. */
  matchedId?: string;
};

export type ContextWindow = ProviderWindow & {
  /** Where `contextWindow` came from. */
  source: WindowSource;
  /**
   * An admin's override set `maxOutputTokens`; `modelLimit` is what the rest of the chain says
   * of the model's own limit (null when nothing does).
   */
  outputOverride?: { modelLimit: number | null };
  matchedId?: string;
  /** For an `observed` window: what the rest of the chain says, which the server did not honour. */
  chain?: ChainWindow;
};
