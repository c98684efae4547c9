import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
// @ts-expect-error -- a plain .mjs script shared with `npm start` and the e2e runner
import { nextStartArgs, serverNodeOptions } from "../../scripts/server-runtime.mjs";
import { type CookieJar, keepCookies, signUpBody } from "./account";

/**
 * Fold as it runs in production, several times over: `next start` processes
 * of the built app on one Postgres and one Redis, for tests and benchmarks
 * about what happens between instances (a stop sent to another one, a reload
 * that lands elsewhere, an instance that dies mid-turn). Needs `next build`
 * first (the e2e runner and the benchmark build it).
 */

// The repository: npm scripts (the e2e runner, the benchmarks) run from there. Playwright
// loads specs as CommonJS, so `import.meta` is not available to find it.
const ROOT = process.cwd();
const NEXT_BIN = path.join(ROOT, "node_modules", "next", "dist", "bin", "next");
const START_TIMEOUT_MS = 90_000;

export type Instance = {
  url: string;
  /** The server's process id (to read its CPU time). */
  pid: number;
  /** Ends the process: SIGTERM by default; SIGKILL is a crash. */
  kill: (signal?: NodeJS.Signals) => Promise<void>;
};

export type InstanceOptions = {
  port: number;
  databaseUrl: string;
  /** Without one the instance keeps its live state in-process, as a single server does. */
  redisUrl?: string;
  /** An OpenAI-compatible base URL ending in /v1 (the fake provider). */
  providerUrl: string;
  env?: Record<string, string>;
};

export async function startInstance(options: InstanceOptions): Promise<Instance> {
  const url = `http://127.0.0.1:${options.port}`;
  const taken = await fetch(`${url}/api/health`).then(
    () => true,
    () => false,
  );
  if (taken) throw new Error(`port ${options.port} already answers: stop what runs there first`);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_OPTIONS: serverNodeOptions(process.env.NODE_OPTIONS),
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    DATABASE_URL: options.databaseUrl,
    BETTER_AUTH_SECRET: "instances-secret-instances-secret-0123",
    OPENAI_COMPATIBLE_BASE_URL: options.providerUrl,
    OPENAI_COMPATIBLE_NAME: "fake",
    DEMO_MODEL: "never",
    REGISTRATION: "open",
    RATE_LIMIT_SIGN_IN_PER_MINUTE: "0",
    RATE_LIMIT_SIGN_IN_FAILURES_PER_ACCOUNT: "0",
    RATE_LIMIT_SIGN_UP_PER_HOUR: "0",
    RATE_LIMIT_TURNS_PER_MINUTE: "0",
    LOG_LEVEL: "error",
    ...options.env,
  };
  if (options.redisUrl) env.REDIS_URL = options.redisUrl;
  else delete env.REDIS_URL;
  // The server itself, not an npx wrapper: a SIGKILL must kill what serves the requests.
  const child: ChildProcess = spawn(
    process.execPath,
    [NEXT_BIN, ...nextStartArgs(options.port, "127.0.0.1")],
    {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "pipe"],
      env,
    },
  );
  let stderr = "";
  child.stderr?.on("data", (data: Buffer) => {
    stderr = (stderr + data.toString()).slice(-4_000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`instance on ${url} exited: ${stderr}`);
    const ok = await fetch(`${url}/api/health`)
      .then((response) => response.ok)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`instance on ${url} did not start: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  if (child.pid === undefined) throw new Error(`instance on ${url} has no process id`);
  return {
    url,
    pid: child.pid,
    kill: async (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** A browser's session over real HTTP: a cookie jar and the calls the tests need. */
export type Client = {
  cookie: string;
  /** fetch against `base` with the session cookie and a same-origin `origin` header. */
  fetch: (base: string, pathname: string, init?: RequestInit) => Promise<Response>;
};

export async function signUp(base: string, email: string): Promise<Client> {
  const response = await fetch(`${base}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: base },
    body: JSON.stringify(signUpBody(email)),
  });
  if (!response.ok) throw new Error(`sign-up failed: ${response.status} ${await response.text()}`);
  const jar: CookieJar = { cookie: "" };
  keepCookies(jar, response);
  if (!jar.cookie.includes("session_token"))
    throw new Error(`sign-up set no session: ${jar.cookie}`);
  return withCookie(jar.cookie);
}

/** A client with the session cookie a browser holds. */
export function withCookie(cookie: string): Client {
  return {
    cookie,
    fetch: (target, pathname, init = {}) => {
      const headers = new Headers(init.headers);
      headers.set("cookie", cookie);
      headers.set("origin", target);
      if (init.method && init.method !== "GET") headers.set("content-type", "application/json");
      return fetch(`${target}${pathname}`, { ...init, headers });
    },
  };
}

export async function createChat(client: Client, base: string): Promise<string> {
  const response = await client.fetch(base, "/api/chats", { method: "POST", body: "{}" });
  if (!response.ok) throw new Error(`creating a chat failed: ${response.status}`);
  return ((await response.json()) as { chat: { id: string } }).chat.id;
}

/** POST /api/chat with a new user message; the response streams the reply. */
export function sendMessage(
  client: Client,
  base: string,
  input: { chatId: string; modelId: string; text: string; signal?: AbortSignal },
): Promise<Response> {
  return client.fetch(base, "/api/chat", {
    method: "POST",
    signal: input.signal,
    body: JSON.stringify({
      trigger: "submit-message",
      chatId: input.chatId,
      modelId: input.modelId,
      message: {
        id: `u-${crypto.randomUUID()}`,
        role: "user",
        parts: [{ type: "text", text: input.text }],
      },
    }),
  });
}
