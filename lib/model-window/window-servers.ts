/**
 * What each local server's own API says about a model (issue 15), as a `LocalReport`:
 * - Ollama: `POST /api/show` (trained `<arch>.context_length`, the Modelfile's `num_ctx`) and
 *   `GET /api/ps` (loaded models with the `context_length` actually allocated);
 * - llama.cpp's server: `GET /props` (`default_generation_settings.n_ctx`, one slot's context);
 * - LM Studio: `GET /api/v0/models/{id}` (`state`, `loaded_context_length`, `max_context_length`).
 * A server without the endpoint answers 404 and its probe says nothing.
 */
import { z } from "zod";
import type { FetchFunction } from "@/lib/ai/remote-models";
import { requestJson } from "./window-http";
import { type LocalReport, OLLAMA_DEFAULT_CONTEXT } from "./window-local";

export type ProbeTarget = {
  fetch: FetchFunction;
  /** The server's root (no trailing `/v1`). */
  root: string;
  apiKey?: string;
  model: string;
  signal: AbortSignal;
};

const tokenCount = z.number().int().positive();

const ollamaShow = z.object({
  parameters: z.string().nullish(),
  model_info: z.record(z.string(), z.unknown()).nullish(),
});

/** One loaded model: an entry that does not fit (another model's odd value) says nothing. */
const ollamaPsEntry = z
  .object({
    name: z.string().nullish(),
    model: z.string().nullish(),
    context_length: tokenCount.nullish().catch(null),
  })
  .nullable()
  .catch(null);

const ollamaPs = z.object({
  models: z.array(ollamaPsEntry).transform((models) => models.filter((m) => m !== null)),
});

const llamaCppProps = z.object({
  default_generation_settings: z.object({ n_ctx: tokenCount }),
});

const lmStudioModel = z.object({
  state: z.string().nullish(),
  max_context_length: tokenCount.nullish(),
  loaded_context_length: tokenCount.nullish(),
});

/** `num_ctx 8192` on a line of the Modelfile parameters Ollama reports. */
const NUM_CTX_LINE = /^\s*num_ctx\s+(\d+)\s*$/m;

export async function ollamaReport(target: ProbeTarget): Promise<LocalReport | null> {
  const { fetch, root, apiKey, model, signal } = target;
  const show = await requestJson(fetch, `${root}/api/show`, {
    apiKey,
    body: { model },
    signal,
    schema: ollamaShow,
  });
  if (!show) return null;
  const numCtx = Number(show.parameters?.match(NUM_CTX_LINE)?.[1] ?? Number.NaN);
  const ps = await requestJson(fetch, `${root}/api/ps`, { apiKey, signal, schema: ollamaPs });
  const running = ps?.models.find((m) => sameOllamaModel(m.model ?? m.name ?? "", model));
  return {
    server: "ollama",
    trained: ollamaContextLength(show.model_info ?? {}),
    loaded: running?.context_length ?? null,
    configured: Number.isInteger(numCtx) && numCtx > 0 ? numCtx : null,
    // Only a list that answered says the server's default applies: it lacks the model, or (an
    // Ollama before July 2025) lists it without the context it was loaded with, which then was
    // that default too. A server without the list cannot tell.
    notLoaded: ps !== null && (running === undefined || running.context_length == null),
    serverDefault: OLLAMA_DEFAULT_CONTEXT,
  };
}

export async function llamaCppReport(
  target: ProbeTarget,
  trained: number | null,
): Promise<LocalReport | null> {
  const { fetch, root, apiKey, signal } = target;
  const props = await requestJson(fetch, `${root}/props`, {
    apiKey,
    signal,
    schema: llamaCppProps,
  });
  if (!props) return null;
  return {
    server: "llama.cpp",
    trained,
    loaded: props.default_generation_settings.n_ctx,
    configured: null,
    notLoaded: false,
    serverDefault: null,
  };
}

export async function lmStudioReport(target: ProbeTarget): Promise<LocalReport | null> {
  const { fetch, root, apiKey, model, signal } = target;
  const segments = model.split("/");
  // A `.` or `..` segment would address another path on the server: no model is named so.
  if (segments.some((segment) => segment === "." || segment === "..")) return null;
  const path = segments.map(encodeURIComponent).join("/");
  const info = await requestJson(fetch, `${root}/api/v0/models/${path}`, {
    apiKey,
    signal,
    schema: lmStudioModel,
  });
  if (!info || (info.max_context_length == null && info.loaded_context_length == null)) {
    return null;
  }
  const loaded = info.state === "loaded" ? (info.loaded_context_length ?? null) : null;
  return {
    server: "lm-studio",
    trained: info.max_context_length ?? null,
    loaded,
    configured: null,
    notLoaded: info.state === "not-loaded",
    serverDefault: null,
  };
}

/** `llama3.2` and `llama3.2:latest` name the same Ollama model. */
function sameOllamaModel(a: string, b: string): boolean {
  const tagged = (name: string) => (name.includes(":") ? name : `${name}:latest`);
  return tagged(a) === tagged(b);
}

/** `model_info["<arch>.context_length"]`, where `<arch>` is `general.architecture`. */
function ollamaContextLength(info: Record<string, unknown>): number | null {
  const arch = info["general.architecture"];
  const keys =
    typeof arch === "string"
      ? [`${arch}.context_length`]
      : Object.keys(info).filter((key) => key.endsWith(".context_length"));
  for (const key of keys) {
    const parsed = tokenCount.safeParse(info[key]);
    if (parsed.success) return parsed.data;
  }
  return null;
}
