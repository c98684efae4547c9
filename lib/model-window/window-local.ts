/**
 * Local model servers (Ollama, llama.cpp's server, LM Studio) often run a model with a much
 * smaller context than it was trained for, and some cut a longer prompt silently. So the
 * window of a model on such a server is the context the running server allocated, before
 * anything the model card says (issue 15). Each server's probe fills in a `LocalReport`;
 * `localWindow` turns it into the one number the chain uses.
 */
import type { ProviderWindow, ServerKind, WindowBasis } from "./window-types";

/** Ollama runs a model at this context unless OLLAMA_CONTEXT_LENGTH or num_ctx say otherwise. */
export const OLLAMA_DEFAULT_CONTEXT = 4096;

/** What one local server said about one model; null fields it did not say. */
export type LocalReport = {
  server: ServerKind;
  /** The context length the model was trained for. */
  trained: number | null;
  /** The context the running server allocated for the model (per request slot). */
  loaded: number | null;
  /** The context the model's own configuration asks for (Ollama: the Modelfile's num_ctx). */
  configured: number | null;
  /** The server answered that the model is not loaded: it loads at its default on first use. */
  notLoaded: boolean;
  /** That default, when Fold knows it for this server. */
  serverDefault: number | null;
  /**
   * The context the server had the model loaded at the last time Fold asked, when it is not
   * loaded now: what it loads it at again, more surely than any default (Ollama picks its own
   * by the memory it has; an admin may have set OLLAMA_CONTEXT_LENGTH).
   */
  lastLoaded?: number | null;
};

/**
 * The window a local server runs the model with: loaded, else configured, else the context it
 * will be loaded at (what it was loaded at last, else the server's default, or `assumedContext`
 * the admin configured for the server), else the trained length. An assumption never exceeds
 * the trained length.
 */
export function localWindow(
  report: LocalReport,
  assumedContext: number | undefined,
): ProviderWindow | null {
  const { trained } = report;
  const capped = (tokens: number) => (trained === null ? tokens : Math.min(tokens, trained));
  const window = (contextWindow: number, basis: WindowBasis): ProviderWindow => ({
    contextWindow,
    maxOutputTokens: null,
    detail: { server: report.server, basis, ...(report.notLoaded ? { notLoaded: true } : {}) },
    ...(trained !== null ? { trainedWindow: trained } : {}),
  });
  if (report.loaded !== null) return window(report.loaded, "loaded");
  if (report.configured !== null) return window(capped(report.configured), "num_ctx");
  // What the admin configured for the server comes first; then what the model was loaded at.
  if (report.notLoaded && assumedContext === undefined && report.lastLoaded) {
    return window(capped(report.lastLoaded), "last_loaded");
  }
  // Without word from the server that the model is not loaded, only a configured default counts.
  const assumed = report.notLoaded ? (assumedContext ?? report.serverDefault) : assumedContext;
  if (assumed !== undefined && assumed !== null) return window(capped(assumed), "assumed");
  if (trained !== null) return window(trained, "trained");
  return null;
}

/**
 * Several probes may answer (llama.cpp's server also mimics parts of Ollama's API): the one
 * that knows the loaded context wins, then Ollama, LM Studio and llama.cpp in that order.
 */
export function pickReport(reports: ReadonlyArray<LocalReport | null>): LocalReport | null {
  const answered = reports.filter((report): report is LocalReport => report !== null);
  return answered.find((report) => report.loaded !== null) ?? answered[0] ?? null;
}
