/**
 * Model ids and the shape of a pickable model: plain data with no provider SDKs behind it,
 * so client code can import it too.
 */

/** A model a user can pick (GET /api/models). */
export type ModelInfo = {
  /** `provider:model`, the id stored on a chat. */
  id: string;
  provider: string;
  model: string;
  label: string;
  providerLabel: string;
  contextWindow?: number;
  maxOutputTokens?: number;
};

/** Provider ids are env names (`OPENAI_COMPATIBLE_NAME`) or built-ins: lowercase, digits, dashes. */
const PROVIDER_ID = /^[a-z0-9][a-z0-9-]*$/;

/** Splits on the first colon only: `local:llama3.1:8b` is model `llama3.1:8b` of `local`. */
export function parseModelId(id: string): { provider: string; model: string } | null {
  const colon = id.indexOf(":");
  if (colon < 0) return null;
  const provider = id.slice(0, colon);
  const model = id.slice(colon + 1);
  if (!PROVIDER_ID.test(provider) || model.trim() === "" || model !== model.trim()) return null;
  return { provider, model };
}
