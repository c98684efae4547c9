// `npm start`: build if needed, then serve on PORT (default 3000). Migrations run at server start.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { buildIfNeeded } from "./build-if-needed.mjs";
import { ensureNode22 } from "./node22.mjs";
import { nextStartArgs, serverNodeOptions } from "./server-runtime.mjs";

ensureNode22();

process.env.NEXT_TELEMETRY_DISABLED = "1";
buildIfNeeded();
const port = process.env.PORT ?? "3000";
// Next's own script, run by this Node (not through npx, which does not pass a signal on): a
// SIGTERM from a service manager then stops the server and frees its port.
const nextBin = createRequire(import.meta.url).resolve("next/dist/bin/next");
const server = spawn(process.execPath, [nextBin, ...nextStartArgs(port)], {
  stdio: "inherit",
  env: { ...process.env, NODE_OPTIONS: serverNodeOptions() },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code) => process.exit(code ?? 0));
