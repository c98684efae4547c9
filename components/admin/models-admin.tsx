"use client";

import { ServerOff } from "lucide-react";
import { percentText } from "../stats/format";
import { AdminPage, REFRESH_FAILED } from "./admin-page";
import { ModelAccessPanel } from "./model-access-panel";
import { ModelRow } from "./model-row";
import { useAdminModels } from "./use-admin-models";

const COLUMNS = [
  { label: "Model", className: "pl-4" },
  { label: "Provider" },
  { label: "Window", className: "text-right" },
  { label: "Trained", className: "text-right" },
  { label: "Loaded", className: "text-right" },
  { label: "Observed", className: "text-right" },
  { label: "Max output", className: "text-right" },
  { label: "Source" },
  { label: "Calibration" },
  { label: "Override (tokens)" },
] as const;

const SKELETON_ROWS = 3;

/** Admin → Models (DESIGN §11): every reachable model, its resolved window, and its override. */
export function ModelsAdmin() {
  const { state, version, refresh, reload, save, forget } = useAdminModels();

  return (
    <AdminPage
      title="Models"
      intro={
        <>
          <p className="max-w-2xl text-sm text-muted">
            Every model Fold can reach, the context window it resolves to and where that number
            comes from: an admin override, a window a server revealed by cutting a prompt silently
            (observed), the provider's API, the model catalog, or a cautious default when nothing is
            known. Beside it: the length the model was trained for, the context the server runs it
            with, and what a cut showed. Leave an override field empty to take that number from the
            rest of the chain. A saved override applies from the next request.
          </p>
          <p className="max-w-2xl text-sm text-muted">
            Calibration: Fold estimates tokens itself before it sends a message, then reads the
            provider's real count from each reply and learns the difference. ×1.10 means the
            provider counted {percentText(10)} more than the estimate; Fold scales its estimates by
            it, so compaction fires in time.
          </p>
        </>
      }
      onRefresh={reload}
      refreshing={state.status === "loading" || refresh.running}
      failure={
        state.status === "error"
          ? { what: "The models could not be loaded.", message: state.message }
          : refresh.error
            ? { what: REFRESH_FAILED, message: refresh.error }
            : null
      }
    >
      {state.status === "ready" ? (
        <ModelAccessPanel models={state.models} refreshKey={version} />
      ) : null}
      {state.status === "error" ? null : state.status === "ready" && state.models.length === 0 ? (
        <div className="flex flex-col items-center gap-2 rounded-2xl border border-line bg-white px-6 py-12 text-center">
          <ServerOff className="text-zinc-300" size={32} />
          <p className="font-medium">No model is reachable.</p>
          <p className="max-w-md text-sm text-muted">
            Configure a provider key or an OpenAI-compatible server (see .env.example), or set
            DEMO_MODEL to auto or always for the offline demo model.
          </p>
        </div>
      ) : (
        <div className="overflow-x-auto rounded-2xl border border-line bg-white shadow-sm">
          <table className="block w-full text-sm md:table" aria-busy={state.status === "loading"}>
            <caption className="sr-only">Models and their context windows</caption>
            <thead className="sr-only border-b border-line bg-zinc-50 text-left text-xs text-muted md:not-sr-only md:table-header-group">
              <tr>
                {COLUMNS.map((c) => (
                  <th
                    key={c.label}
                    scope="col"
                    className={`py-2.5 pr-4 font-medium ${"className" in c ? c.className : ""}`}
                  >
                    {c.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody className="block divide-y divide-line md:table-row-group">
              {state.status === "loading" ? (
                <LoadingRows />
              ) : (
                state.models.map((model) => (
                  <ModelRow key={model.id} model={model} onSave={save} onForget={forget} />
                ))
              )}
            </tbody>
          </table>
          {state.status === "loading" ? (
            <p role="status" className="sr-only">
              Loading models…
            </p>
          ) : null}
        </div>
      )}
    </AdminPage>
  );
}

function LoadingRows() {
  return Array.from({ length: SKELETON_ROWS }, (_, i) => (
    // biome-ignore lint/suspicious/noArrayIndexKey: placeholders with no identity of their own
    <tr key={i} className="block space-y-3 p-4 md:table-row md:p-0">
      {COLUMNS.map((c) => (
        <td
          key={c.label}
          className={`block md:table-cell md:py-4 md:pr-4 ${c.label === "Model" ? "md:pl-4" : ""}`}
        >
          <div aria-hidden="true" className="h-3 animate-pulse rounded bg-zinc-100" />
        </td>
      ))}
    </tr>
  ));
}
