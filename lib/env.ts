import { z } from "zod";
import { parseModelId } from "@/lib/ai/model-id";
import { clampRatios, DEFAULT_BUDGET_RATIOS, minimumWindow } from "@/lib/context/budget";

/**
 * The only reader of process.env. Every knob has a default and a range check;
 * a value out of range is reported and replaced by its default, so a typo in
 * an env file degrades the feature instead of crashing the server.
 */

type Source = Record<string, string | undefined>;
type Warn = (message: string) => void;

const csv = (value: string | undefined) =>
  (value ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);

/** A list of `provider:model` ids; an entry that is none is reported, naming the variable, and left out. */
function modelIds(
  name: string,
  source: Record<string, string | undefined>,
  warn: (message: string) => void,
): string[] {
  return csv(source[name]).filter((id) => {
    if (parseModelId(id)) return true;
    warn(`${name}: "${id}" is not a provider:model id (e.g. openai:gpt-4o-mini); left out`);
    return false;
  });
}

/**
 * Settings whose value may hold a credential (a password in a database or Redis URL, a secret,
 * a key): a warning about one names it but never shows its value, since warnings go to the
 * console, where the log's redaction does not reach.
 */
const MAY_HOLD_SECRET = /(URL|SECRET|KEY)$/;

function knob<T>(source: Source, name: string, schema: z.ZodType<T>, fallback: T, warn: Warn): T {
  const raw = source[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const parsed = schema.safeParse(raw.trim());
  if (parsed.success) return parsed.data;
  const shown = MAY_HOLD_SECRET.test(name) ? name : `${name}=${JSON.stringify(raw)}`;
  const replaced =
    name === "DATABASE_URL"
      ? "no database is opened until it is fixed"
      : fallback === undefined
        ? "ignoring it"
        : `using ${JSON.stringify(fallback)}`;
  warn(`${shown} is invalid (${parsed.error.issues[0]?.message}); ${replaced}`);
  return fallback;
}

const ratio = (min: number, max: number) => z.coerce.number().min(min).max(max);
const positiveInt = (max: number) => z.coerce.number().int().min(1).max(max);
const bool = z
  .enum(["true", "false", "1", "0", "yes", "no", "on", "off"])
  .transform((v) => ["true", "1", "yes", "on"].includes(v));
/**
 * Postgres's own schemes, and pg's `socket:/path?db=` form: `localhost:5432/fold` parses as a
 * URL of scheme `localhost`.
 */
const postgresUrl = z.url({ protocol: /^(postgres(ql)?|socket)$/ });
const httpUrl = z.url({ protocol: /^https?$/ });
/**
 * A provider's base URL: no user name or password in it. fetch refuses such a URL outright, and
 * every failed request would then log it; the key belongs in the server's `_API_KEY`.
 */
const serverUrl = httpUrl.refine((value) => {
  const { username, password } = new URL(value);
  return username === "" && password === "";
}, "it holds a user name or password; put the key in the matching _API_KEY instead");

/** Provider ids Fold defines itself; an OpenAI-compatible server cannot take one of these names. */
export const BUILT_IN_PROVIDER_IDS = [
  "openai",
  "anthropic",
  "google",
  "openrouter",
  "demo",
] as const;
/** Servers after the first are numbered `OPENAI_COMPATIBLE_2_*` … `OPENAI_COMPATIBLE_9_*`. */
export const MAX_OPENAI_COMPATIBLE_SERVERS = 9;

export type OpenAICompatibleServer = {
  name: string;
  baseUrl: string;
  apiKey?: string;
  /**
   * The context the server loads a model with when nothing else says (Ollama's
   * OLLAMA_CONTEXT_LENGTH, LM Studio's default), for a model it has not loaded yet or a server
   * that cannot tell. Unset: Ollama's own default for a model Ollama says is not loaded.
   */
  assumedContext?: number;
};

/**
 * Bounds of `OPENAI_COMPATIBLE_ASSUMED_CONTEXT`: the least window that leaves room for the
 * reply's reserve and a short conversation (what the admin's override accepts too); with less,
 * every message would be too long.
 */
export const ASSUMED_CONTEXT_MIN = minimumWindow(null);
export const ASSUMED_CONTEXT_MAX = 10_000_000;

const providerName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,31}$/, "lowercase letters, digits and dashes");

/**
 * A server's base URL that is its root alone (`http://127.0.0.1:11434`) gets `/v1`: Ollama, vLLM,
 * LM Studio and llama.cpp serve the OpenAI-compatible API there, and the root would answer every
 * chat and model list with a 404. Any other path is kept (a gateway's `/openai`, say).
 */
function apiBaseUrl(baseUrl: string, name: string, warn: Warn): string {
  const url = new URL(baseUrl);
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "") return baseUrl;
  const repaired = `${url.origin}/v1`;
  warn(`${name} has no path; using ${repaired}, where OpenAI-compatible servers serve their API`);
  return repaired;
}

/**
 * `OPENAI_COMPATIBLE_*` (name `local`), then `OPENAI_COMPATIBLE_2_*` (name `local2`) and so
 * on. A server without a base URL is not configured; one whose name is taken is skipped.
 */
function openaiCompatibleServers(source: Source, warn: Warn): OpenAICompatibleServer[] {
  const servers: OpenAICompatibleServer[] = [];
  const taken = new Set<string>(BUILT_IN_PROVIDER_IDS);
  for (let n = 1; n <= MAX_OPENAI_COMPATIBLE_SERVERS; n++) {
    const prefix = n === 1 ? "OPENAI_COMPATIBLE_" : `OPENAI_COMPATIBLE_${n}_`;
    const rawBaseUrl = source[`${prefix}BASE_URL`]?.trim();
    const apiKey = source[`${prefix}API_KEY`]?.trim() || undefined;
    if (!rawBaseUrl) {
      if (apiKey || source[`${prefix}NAME`]?.trim() || source[`${prefix}ASSUMED_CONTEXT`]?.trim()) {
        warn(`${prefix}BASE_URL is not set; ignoring the other ${prefix}* variables`);
      }
      continue;
    }
    const baseUrl = knob(
      source,
      `${prefix}BASE_URL`,
      serverUrl,
      undefined as string | undefined,
      warn,
    );
    if (!baseUrl) continue;
    const apiUrl = apiBaseUrl(baseUrl, `${prefix}BASE_URL`, warn);
    const name = knob(source, `${prefix}NAME`, providerName, n === 1 ? "local" : `local${n}`, warn);
    if (taken.has(name)) {
      warn(
        `${prefix}NAME=${JSON.stringify(name)} is already a provider name; skipping that server`,
      );
      continue;
    }
    taken.add(name);
    const assumedContext = knob(
      source,
      `${prefix}ASSUMED_CONTEXT`,
      z.coerce.number().int().min(ASSUMED_CONTEXT_MIN).max(ASSUMED_CONTEXT_MAX),
      undefined as number | undefined,
      warn,
    );
    servers.push({
      name,
      baseUrl: apiUrl,
      ...(apiKey ? { apiKey } : {}),
      ...(assumedContext ? { assumedContext } : {}),
    });
  }
  return servers;
}

export const COMPACTION_DEFAULTS = {
  ...DEFAULT_BUDGET_RATIOS,
  keepRecentToolResults: 3,
  /** Share of the summary budget held for the reference ledger (DESIGN §16). */
  ledgerShare: 0.5,
  summarizerTimeoutMs: 60_000,
} as const;

/** A tool loop stops after this many model calls; folding inside the turn keeps long ones in the window. */
export const TURN_MAX_STEPS_DEFAULT = 200;
/**
 * No chunk from a model that has begun answering for this long, no answer begun this long after
 * a request was sent (a local server loads the model and reads the whole prompt first: minutes,
 * for a long chat on a CPU), or a model call running this long, stops the turn.
 */
export const TURN_DEADLINE_DEFAULTS = {
  idleMs: 60_000,
  firstTokenMs: 300_000,
  maxMs: 900_000,
} as const;

/** Who may create an account after the first (the admin): anyone, anyone once approved, no one. */
export const REGISTRATION_MODES = ["open", "approval", "closed"] as const;
export type RegistrationMode = (typeof REGISTRATION_MODES)[number];

/**
 * Per client address (sign-in, sign-up), per account (wrong passwords, from any address) or per
 * user (turns); 0 turns a limit off.
 */
export const RATE_LIMIT_DEFAULTS = {
  signInPerMinute: 10,
  signInFailuresPerAccount: 10,
  signUpPerHour: 10,
  turnsPerMinute: 20,
} as const;
/** Proxy hops in front of Fold whose X-Forwarded-For entries are believed. */
export const MAX_TRUST_PROXY_HOPS = 10;

const redisUrl = z.url({ protocol: /^rediss?$/ });
/** A count where 0 means "off". */
const count = (max: number) => z.coerce.number().int().min(0).max(max);
const MAX_RATE_LIMIT_POINTS = 100_000;

export function loadEnv(source: Source = process.env, warn: Warn = console.warn) {
  const k = <T>(name: string, schema: z.ZodType<T>, fallback: T) =>
    knob(source, name, schema, fallback, warn);
  const optionalString = (name: string) => source[name]?.trim() || undefined;
  // Removed: whoever first registered with a listed address became admin, and email is never
  // verified. Admins are promoted in Admin → Users now.
  if (optionalString("ADMIN_EMAILS")) {
    warn("ADMIN_EMAILS is no longer read: promote admins in Admin → Users");
  }
  const databaseUrl = k("DATABASE_URL", postgresUrl, undefined as string | undefined);
  const nodeEnv = k("NODE_ENV", z.enum(["development", "production", "test"]), "development");
  const authUrl = k("BETTER_AUTH_URL", httpUrl, undefined as string | undefined);
  // Without it, a request that changes something is trusted from whichever host the browser
  // addressed (lib/http/origin.ts): a page elsewhere whose name it points at this server (DNS
  // rebinding) passes that check, and could register the first account, the admin, on a fresh
  // install that others can reach.
  if (nodeEnv === "production" && !authUrl) {
    warn(
      "BETTER_AUTH_URL is not set: requests are trusted from whatever host name a browser used to reach this server; set it to the app's public URL if anyone else can reach it",
    );
  }

  const loaded = {
    nodeEnv,
    logLevel: k(
      "LOG_LEVEL",
      z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]),
      "info",
    ),
    databaseUrl,
    /**
     * DATABASE_URL is set but is no URL (a password with a raw `#` or `/` in it, say): Fold
     * opens no database rather than start on an empty embedded one, where the first account
     * to sign up would become its admin (lib/db/client.ts).
     */
    databaseUrlInvalid: databaseUrl === undefined && optionalString("DATABASE_URL") !== undefined,
    pgliteDir: optionalString("PGLITE_DIR") ?? "./.data/pglite",
    dataDir: optionalString("FOLD_DATA_DIR") ?? "./.data",
    authSecret: k("BETTER_AUTH_SECRET", z.string().min(32), undefined as string | undefined),
    authUrl,
    registration: k("REGISTRATION", z.enum(REGISTRATION_MODES), "approval"),
    trustProxy: k<number>("TRUST_PROXY", count(MAX_TRUST_PROXY_HOPS), 0),
    redisUrl: k("REDIS_URL", redisUrl, undefined as string | undefined),
    rateLimits: {
      signInPerMinute: k<number>(
        "RATE_LIMIT_SIGN_IN_PER_MINUTE",
        count(MAX_RATE_LIMIT_POINTS),
        RATE_LIMIT_DEFAULTS.signInPerMinute,
      ),
      signInFailuresPerAccount: k<number>(
        "RATE_LIMIT_SIGN_IN_FAILURES_PER_ACCOUNT",
        count(MAX_RATE_LIMIT_POINTS),
        RATE_LIMIT_DEFAULTS.signInFailuresPerAccount,
      ),
      signUpPerHour: k<number>(
        "RATE_LIMIT_SIGN_UP_PER_HOUR",
        count(MAX_RATE_LIMIT_POINTS),
        RATE_LIMIT_DEFAULTS.signUpPerHour,
      ),
      turnsPerMinute: k<number>(
        "RATE_LIMIT_TURNS_PER_MINUTE",
        count(MAX_RATE_LIMIT_POINTS),
        RATE_LIMIT_DEFAULTS.turnsPerMinute,
      ),
    },
    providers: {
      openaiApiKey: optionalString("OPENAI_API_KEY"),
      anthropicApiKey: optionalString("ANTHROPIC_API_KEY"),
      googleApiKey: optionalString("GOOGLE_GENERATIVE_AI_API_KEY"),
      openrouterApiKey: optionalString("OPENROUTER_API_KEY"),
      openaiCompatible: openaiCompatibleServers(source, warn),
    },
    demoModel: k("DEMO_MODEL", z.enum(["auto", "always", "never"]), "auto"),
    fetchUrlAllowPrivate: k("FETCH_URL_ALLOW_PRIVATE", bool, false),
    aiTelemetry: k("AI_TELEMETRY", bool, false),
    turnMaxSteps: k("TURN_MAX_STEPS", positiveInt(1000), TURN_MAX_STEPS_DEFAULT),
    turnIdleTimeoutMs: k(
      "TURN_IDLE_TIMEOUT_MS",
      positiveInt(3_600_000),
      TURN_DEADLINE_DEFAULTS.idleMs,
    ),
    turnFirstTokenTimeoutMs: k(
      "TURN_FIRST_TOKEN_TIMEOUT_MS",
      positiveInt(3_600_000),
      TURN_DEADLINE_DEFAULTS.firstTokenMs,
    ),
    turnMaxDurationMs: k(
      "TURN_MAX_DURATION_MS",
      positiveInt(86_400_000),
      TURN_DEADLINE_DEFAULTS.maxMs,
    ),
    // Ratios that cannot work together are repaired here, once, with a warning saying why.
    compaction: clampRatios(
      {
        enabled: k("COMPACTION_ENABLED", bool, true),
        background: k("COMPACTION_BACKGROUND", bool, true),
        triggerRatio: k(
          "COMPACTION_TRIGGER_RATIO",
          ratio(0.1, 0.99),
          COMPACTION_DEFAULTS.triggerRatio,
        ),
        targetRatio: k(
          "COMPACTION_TARGET_RATIO",
          ratio(0.05, 0.95),
          COMPACTION_DEFAULTS.targetRatio,
        ),
        reserveRatio: k(
          "COMPACTION_RESERVE_RATIO",
          ratio(0, 0.5),
          COMPACTION_DEFAULTS.reserveRatio,
        ),
        keepRecentRatio: k(
          "COMPACTION_KEEP_RECENT_RATIO",
          ratio(0.05, 0.9),
          COMPACTION_DEFAULTS.keepRecentRatio,
        ),
        keepRecentToolResults: k(
          "COMPACTION_KEEP_RECENT_TOOL_RESULTS",
          z.coerce.number().int().min(0).max(100),
          COMPACTION_DEFAULTS.keepRecentToolResults,
        ),
        summaryRatio: k(
          "COMPACTION_SUMMARY_RATIO",
          ratio(0.02, 0.5),
          COMPACTION_DEFAULTS.summaryRatio,
        ),
        ledgerShare: k("COMPACTION_LEDGER_SHARE", ratio(0.1, 0.9), COMPACTION_DEFAULTS.ledgerShare),
        bulkyRatio: k("COMPACTION_BULKY_RATIO", ratio(0.005, 0.5), COMPACTION_DEFAULTS.bulkyRatio),
        summarizerModels: modelIds("COMPACTION_SUMMARIZER_MODELS", source, warn),
        summarizerTimeoutMs: k(
          "COMPACTION_SUMMARIZER_TIMEOUT_MS",
          positiveInt(600_000),
          COMPACTION_DEFAULTS.summarizerTimeoutMs,
        ),
      },
      warn,
      {
        trigger: optionalString("COMPACTION_TRIGGER_RATIO") !== undefined,
        target: optionalString("COMPACTION_TARGET_RATIO") !== undefined,
      },
    ),
  };
  warnAboutSetup(loaded, optionalString("BETTER_AUTH_SECRET") !== undefined, warn);
  return loaded;
}

/** Whether any provider is configured (the demo model aside). */
function anyProvider(providers: {
  openaiApiKey?: string;
  anthropicApiKey?: string;
  googleApiKey?: string;
  openrouterApiKey?: string;
  openaiCompatible: readonly unknown[];
}): boolean {
  const { openaiCompatible, ...keys } = providers;
  return openaiCompatible.length > 0 || Object.values(keys).some(Boolean);
}

/**
 * Settings each valid alone that together leave Fold unable to do its job, said once at start
 * rather than found by the first user: no model to answer with, or several instances that
 * each sign sessions with a secret of their own.
 */
function warnAboutSetup(
  loaded: {
    demoModel: string;
    providers: Parameters<typeof anyProvider>[0];
    redisUrl?: string;
    authSecret?: string;
  },
  secretGiven: boolean,
  warn: Warn,
): void {
  if (loaded.demoModel === "never" && !anyProvider(loaded.providers)) {
    warn(
      "DEMO_MODEL=never and no provider is configured: no chat can be answered; set a provider's API key or base URL, or DEMO_MODEL=auto",
    );
  }
  // Without a secret set, each instance generates one in its own data directory (unless they
  // share it): a session signed by one is refused by the others, signing users out at random.
  if (loaded.redisUrl && !loaded.authSecret) {
    warn(
      `REDIS_URL is set (several instances) but BETTER_AUTH_SECRET is ${secretGiven ? "invalid" : "not set"}: instances that do not share FOLD_DATA_DIR each sign sessions with a secret of their own, and a user signed in on one is signed out by another; set the same BETTER_AUTH_SECRET (32+ characters) on every instance`,
    );
  }
}

export type Env = ReturnType<typeof loadEnv>;

let cached: Env | undefined;

/** The parsed environment of this process, read once. */
export function env(): Env {
  cached ??= loadEnv();
  return cached;
}
