"use client";

import {
  type Dispatch,
  type SetStateAction,
  useCallback,
  useEffect,
  useRef,
  useState,
} from "react";
import { adminCall, type Result } from "./admin-fetch";

export type ResourceState<T> =
  | { status: "loading" }
  | { status: "error"; message: string }
  | ({ status: "ready" } & T);

/** A refresh of a table already shown: running, or what it failed with (the table stays). */
export type RefreshState = { running: boolean; error: string | null };

/**
 * One admin table read from `url` (GET, JSON), loaded on mount and again on `reload`. A failed
 * first load is the error page; a failed refresh keeps the table and says so in `refresh`.
 * `version` counts the loads asked for (a panel beside the table refetches with it).
 *
 * A write answered while a load is on its way makes that load start again: the server read
 * the table before the write, so its answer would put the old row back over the new one.
 *
 * `load` reads the table of an address (a GET of it unless a table needs more, as one read a
 * page at a time does).
 */
export function useAdminResource<T extends object>(
  url: string,
  load: (url: string, signal: AbortSignal) => Promise<Result<T>> = getTable,
) {
  const [state, setState] = useState<ResourceState<T>>({ status: "loading" });
  const [version, setVersion] = useState(0);
  const [refresh, setRefresh] = useState<RefreshState>({ running: false, error: null });
  /** The address the table shown was loaded from (another while a new one loads). */
  const [loadedUrl, setLoadedUrl] = useState<string | null>(null);
  /** The address whose last load failed: it is not loading any more. */
  const [failedUrl, setFailedUrl] = useState<string | null>(null);
  const loading = useRef(false);
  const loader = useRef(load);
  loader.current = load;

  // biome-ignore lint/correctness/useExhaustiveDependencies: version is the signal to refetch
  useEffect(() => {
    const controller = new AbortController();
    loading.current = true;
    loader
      .current(url, controller.signal)
      .then((result) => {
        if (controller.signal.aborted) return;
        loading.current = false;
        setFailedUrl(result.ok ? null : url);
        if (result.ok) {
          setState({ status: "ready", ...result.value });
          setLoadedUrl(url);
        } else
          setState((s) =>
            s.status === "ready" ? s : { status: "error", message: result.message },
          );
        setRefresh({ running: false, error: result.ok ? null : result.message });
      })
      .catch((error: unknown) => {
        // Aborted: the page moved on, or a newer load replaced this one.
        if (controller.signal.aborted) return;
        loading.current = false;
        // An answer that was not the JSON it should be (cut off, or not Fold's).
        const message = error instanceof Error ? error.message : String(error);
        setFailedUrl(url);
        setState((s) => (s.status === "ready" ? s : { status: "error", message }));
        setRefresh({ running: false, error: message });
      });
    return () => controller.abort();
  }, [url, version]);

  const reload = useCallback(() => {
    setState((s) => (s.status === "error" ? { status: "loading" } : s));
    setRefresh({ running: true, error: null });
    setVersion((v) => v + 1);
  }, []);

  /** Says a write was answered: a load started before it is asked for again. */
  const wrote = useCallback(() => {
    if (loading.current) setVersion((v) => v + 1);
  }, []);

  return {
    state,
    setState: setState as Dispatch<SetStateAction<ResourceState<T>>>,
    version,
    refresh,
    /** The address the table shown was loaded from. */
    loadedUrl,
    /** Whether a table of `url` is on its way: the one shown is of another, and it has not failed. */
    loadingOther: state.status === "ready" && loadedUrl !== url && failedUrl !== url,
    reload,
    wrote,
  };
}

function getTable<T>(url: string, signal: AbortSignal): Promise<Result<T>> {
  return adminCall<T>(url, { signal });
}
