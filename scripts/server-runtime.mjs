// How Node runs Fold's server. Node 22 keeps AsyncLocalStorage (which Next.js, better-auth
// and Fold's own database scope use on every request) on async hooks unless told otherwise:
// every promise then pays an init/before/after hook, about a fifth of a chat turn's CPU.
// `--experimental-async-context-frame` moves it to V8's context frames, the implementation
// Node 24 made the default (from 22.16 on the same code). Nodes that no longer know the flag
// have it on already.

const ASYNC_CONTEXT_FRAME = "--experimental-async-context-frame";

/** NODE_OPTIONS for a server process: `current` plus what this Node needs. */
export function serverNodeOptions(current = process.env.NODE_OPTIONS ?? "") {
  const flags = current.split(/\s+/).filter(Boolean);
  if (!process.allowedNodeEnvironmentFlags.has(ASYNC_CONTEXT_FRAME)) return flags.join(" ");
  if (flags.some((flag) => flag.endsWith("async-context-frame"))) return flags.join(" ");
  return [...flags, ASYNC_CONTEXT_FRAME].join(" ");
}
