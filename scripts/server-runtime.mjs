// How Node runs Fold's server. Node 22 keeps AsyncLocalStorage (which Next.js, better-auth
// and Fold's own database scope use on every request) on async hooks unless told otherwise:
// every promise then pays an init/before/after hook, about a fifth of a chat turn's CPU.
// `--experimental-async-context-frame` moves it to V8's context frames, the implementation
// Node 24 made the default (from 22.16 on the same code). Nodes that no longer know the flag
// have it on already.
//
// A turn allocates briefly-lived objects by the megabyte (stream chunks, parsed rows, the
// request it sends): with V8's default young generation, 20 chats at once collect it so
// often that objects still in use get copied to the old one and collected again there. A
// 32 MB semi-space cut the CPU of a turn by about a tenth in the `chat` benchmark, for some
// 60–90 MB more resident memory under that load. A size given in NODE_OPTIONS wins.

const ASYNC_CONTEXT_FRAME = "--experimental-async-context-frame";
const SEMI_SPACE = "--max-semi-space-size";
const SEMI_SPACE_MB = 32;

/** NODE_OPTIONS for a server process: `current` plus what this Node needs. */
export function serverNodeOptions(current = process.env.NODE_OPTIONS ?? "") {
  const flags = current.split(/\s+/).filter(Boolean);
  // V8 reads its flags with `_` or `-` alike.
  if (!flags.some((flag) => flag.replaceAll("_", "-").startsWith(SEMI_SPACE))) {
    flags.push(`${SEMI_SPACE}=${SEMI_SPACE_MB}`);
  }
  if (!process.allowedNodeEnvironmentFlags.has(ASYNC_CONTEXT_FRAME)) return flags.join(" ");
  if (flags.some((flag) => flag.endsWith("async-context-frame"))) return flags.join(" ");
  return [...flags, ASYNC_CONTEXT_FRAME].join(" ");
}

// Node closes a kept-alive connection after 5 s idle. A client that keeps connections
// (Playwright's request context, a reverse proxy's upstream pool: nginx, Caddy, a cloud load
// balancer, commonly 60 s and more) can send its next request just as the server closes that
// socket, and gets ECONNRESET or a 502 for it. The server keeps idle connections for longer
// than those pools do, so the client is the one that closes them.
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** `next start`'s arguments for a server on `port` (and `host`, when given). */
export function nextStartArgs(port, host) {
  const args = ["start", "-p", String(port), "--keepAliveTimeout", String(KEEP_ALIVE_TIMEOUT_MS)];
  return host ? [...args, "-H", host] : args;
}
