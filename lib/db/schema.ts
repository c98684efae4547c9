import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  date,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  real,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";

const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().defaultNow();
const updatedAt = () => timestamp("updated_at", { withTimezone: true }).notNull().defaultNow();

// ── better-auth tables ────────────────────────────────────────────────────────

/** pending: waits for an admin's approval; disabled: may not sign in. Existing rows stay active. */
export const USER_STATUSES = ["active", "pending", "disabled"] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

export const user = pgTable("user", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  email: text("email").notNull().unique(),
  emailVerified: boolean("email_verified").notNull().default(false),
  image: text("image"),
  role: text("role", { enum: ["admin", "user"] })
    .notNull()
    .default("user"),
  status: text("status", { enum: USER_STATUSES }).notNull().default("active"),
  // Per-user quota overrides; null takes the admin-set default (lib/limits/quota.ts).
  dailyTokenLimit: integer("daily_token_limit"),
  dailyMessageLimit: integer("daily_message_limit"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const session = pgTable(
  "session",
  {
    id: text("id").primaryKey(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    token: text("token").notNull().unique(),
    ipAddress: text("ip_address"),
    userAgent: text("user_agent"),
    userId: text("user_id")
      .notNull()
      .references(() => user.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("session_user_id_idx").on(t.userId)],
);

export const account = pgTable(
  "account",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    providerId: text("provider_id").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => user.id, { onDelete: "cascade" }),
    accessToken: text("access_token"),
    refreshToken: text("refresh_token"),
    idToken: text("id_token"),
    accessTokenExpiresAt: timestamp("access_token_expires_at", { withTimezone: true }),
    refreshTokenExpiresAt: timestamp("refresh_token_expires_at", { withTimezone: true }),
    scope: text("scope"),
    password: text("password"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("account_user_id_idx").on(t.userId)],
);

export const verification = pgTable(
  "verification",
  {
    id: text("id").primaryKey(),
    identifier: text("identifier").notNull(),
    value: text("value").notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("verification_identifier_idx").on(t.identifier)],
);

// ── Fold ──────────────────────────────────────────────────────────────────────

export const chat = pgTable(
  "chat",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    userId: text("user_id")
      .notNull()
      .references(() => user.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    // The title was given: at the chat's creation, by a rename, or by its first turn from its
    // first message. A chat made without one (false) shows DEFAULT_CHAT_TITLE until its first
    // turn names it; the flag, not the text, says so, since a user may name a chat that too.
    titled: boolean("titled").notNull().default(true),
    modelId: text("model_id"),
    // When the user picked `modelId` (their browser's clock, never ahead of the server's): a
    // pick saved late, after a later one, does not take the chat back to it.
    modelPickedAt: timestamp("model_picked_at", { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    // Compaction state: written only by lib/db/compaction-state.ts (DESIGN §4).
    contextSummary: text("context_summary"),
    summaryWatermark: text("summary_watermark"),
    compactionDirty: boolean("compaction_dirty").notNull().default(false),
    version: integer("version").notNull().default(0),
    // Bumped by every edit, regeneration or truncation of the history; a compaction's commit
    // compares it, so a summary of text that changed meanwhile is never written.
    historyVersion: integer("history_version").notNull().default(0),
    // Lease: a turn is streaming until this instant (holds across server instances).
    activeTurnUntil: timestamp("active_turn_until", { withTimezone: true }),
    // Lease of a background compaction (DESIGN §16): held apart from the turn's, so a turn
    // whose view fits goes ahead while the summarizer runs; one that does not fit waits.
    compactionUntil: timestamp("compaction_until", { withTimezone: true }),
  },
  (t) => [index("chat_user_updated_idx").on(t.userId, t.updatedAt)],
);

export const message = pgTable(
  "message",
  {
    id: text("id").primaryKey(),
    chatId: uuid("chat_id")
      .notNull()
      .references(() => chat.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    role: text("role", { enum: ["system", "user", "assistant"] }).notNull(),
    parts: jsonb("parts").notNull().$type<unknown[]>(),
    metadata: jsonb("metadata").$type<Record<string, unknown>>(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("message_chat_seq_idx").on(t.chatId, t.seq),
    // A turn reads pinned messages the summary covers: found without scanning the chat.
    index("message_pinned_idx").on(t.chatId, t.seq).where(sql`${t.metadata} ->> 'pinned' = 'true'`),
  ],
);

/** A message as an archived branch holds it: the stored row without its place in the chat. */
export type ArchivedMessage = {
  id: string;
  role: "system" | "user" | "assistant";
  parts: unknown[];
  metadata: Record<string, unknown> | null;
  createdAt: string;
  /**
   * Its place in the chat when it was archived: a summary and recall number messages by it,
   * gaps included (an entry kept where a reply was taken away). Absent in versions archived
   * before it was kept.
   */
  seq?: number;
};

/**
 * One version of an edited user message and everything that followed it (issue 14, safe
 * edits). An edit keeps the message's id, so its versions share `anchor_id`; exactly one is
 * active, and its messages live in `message`. An inactive version holds its messages here,
 * with the summary and watermark the chat had when it was left, so switching back restores
 * the compaction state that belongs to it.
 */
export const messageBranch = pgTable(
  "message_branch",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    chatId: uuid("chat_id")
      .notNull()
      .references(() => chat.id, { onDelete: "cascade" }),
    anchorId: text("anchor_id").notNull(),
    /** 1-based, in the order the versions were written: the ‹ n/m › the chat shows. */
    position: integer("position").notNull(),
    active: boolean("active").notNull().default(false),
    /** The anchor and every later message, while this version is not shown; null while it is. */
    messages: jsonb("messages").$type<ArchivedMessage[]>(),
    /**
     * The ids of `messages`, kept by Postgres: whether a version holds a message is read here,
     * a few bytes a message, instead of in every archived message whole.
     */
    messageIds: jsonb("message_ids")
      .$type<string[]>()
      .generatedAlwaysAs(sql`jsonb_path_query_array(messages, '$[*].id')`),
    summary: text("summary"),
    watermark: text("watermark"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("message_branch_anchor_position_idx").on(t.chatId, t.anchorId, t.position)],
);

export const modelOverride = pgTable(
  "model_override",
  {
    provider: text("provider").notNull(),
    model: text("model").notNull(),
    contextWindow: integer("context_window"),
    maxOutputTokens: integer("max_output_tokens"),
    updatedBy: text("updated_by").references(() => user.id, { onDelete: "set null" }),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.model] })],
);

export const modelCalibration = pgTable(
  "model_calibration",
  {
    provider: text("provider").notNull(),
    model: text("model").notNull(),
    ratio: real("ratio").notNull().default(1),
    samples: integer("samples").notNull().default(0),
    /** The per-content-class fit (ratios and covariance, lib/context/calibration.ts); null = cold. */
    classFit: jsonb("class_fit").$type<unknown>(),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.model] })],
);

/**
 * A model's window as a server revealed it by cutting a prompt silently (issue 15): the
 * tokens it kept. The chain uses it (below admin overrides) while the rest of the chain still
 * gives `chain_window`, the window Fold believed when it saw the cut.
 */
export const modelObservedWindow = pgTable(
  "model_observed_window",
  {
    provider: text("provider").notNull(),
    model: text("model").notNull(),
    contextWindow: integer("context_window").notNull(),
    /** Fold's estimate of the prompt the server cut. */
    sentTokens: integer("sent_tokens").notNull(),
    chainWindow: integer("chain_window").notNull(),
    /** Where `chain_window` came from, as the ring names it (e.g. "Ollama, trained length"). */
    chainSource: text("chain_source").notNull(),
    chatId: uuid("chat_id").references(() => chat.id, { onDelete: "set null" }),
    observedAt: timestamp("observed_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.model] })],
);

export const COMPACTION_REASONS = [
  "threshold",
  "manual",
  "overflow",
  "length",
  "invalidated",
  "truncated",
  /** The user rewrote the summary in the memory panel. */
  "edited",
  /** A new chat seeded with another chat's summary ("Continue in a new chat"). */
  "handoff",
] as const;
export const COMPACTION_OUTCOMES = [
  "summarized",
  "fallback",
  "skipped",
  "conflict",
  "failed",
] as const;

export const compactionEvent = pgTable(
  "compaction_event",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    chatId: uuid("chat_id")
      .notNull()
      .references(() => chat.id, { onDelete: "cascade" }),
    reason: text("reason", { enum: COMPACTION_REASONS }).notNull(),
    outcome: text("outcome", { enum: COMPACTION_OUTCOMES }).notNull(),
    tokensBefore: integer("tokens_before"),
    tokensAfter: integer("tokens_after"),
    messagesSummarized: integer("messages_summarized").notNull().default(0),
    watermarkFrom: text("watermark_from"),
    watermarkTo: text("watermark_to"),
    /**
     * The watermark message's content when the event was written (a hash of its parts): a user
     * message edited in place keeps its id, and a summary of its old text must not come back.
     * Null for events written before it was kept.
     */
    watermarkKey: text("watermark_key"),
    summary: text("summary"),
    summarizerModel: text("summarizer_model"),
    latencyMs: integer("latency_ms"),
    error: text("error"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().default(sql`now()`),
  },
  (t) => [index("compaction_event_chat_created_idx").on(t.chatId, t.createdAt)],
);

// ── Limits (DESIGN §16, multi-user) ───────────────────────────────────────────

/** One user's usage on one UTC day: turns started and provider tokens spent. */
export const usageDay = pgTable(
  "usage_day",
  {
    userId: text("user_id")
      .notNull()
      .references(() => user.id, { onDelete: "cascade" }),
    day: date("day", { mode: "string" }).notNull(),
    messages: integer("messages").notNull().default(0),
    tokens: bigint("tokens", { mode: "number" }).notNull().default(0),
    /**
     * How many times an admin started this day over: a turn admitted before a reset gives
     * nothing back to the day after it (its message and its held tokens went with the reset).
     */
    resets: integer("resets").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.userId, t.day] })],
);

/** The admin-set daily quotas every user has unless overridden; one row, id 1. Null: no limit. */
export const quotaDefault = pgTable("quota_default", {
  id: integer("id").primaryKey().default(1),
  dailyTokenLimit: integer("daily_token_limit"),
  dailyMessageLimit: integer("daily_message_limit"),
  updatedBy: text("updated_by").references(() => user.id, { onDelete: "set null" }),
  updatedAt: updatedAt(),
});

/** A provider whose models are restricted to `allowed_model`; without a row, all are allowed. */
export const providerAccess = pgTable("provider_access", {
  provider: text("provider").primaryKey(),
  restricted: boolean("restricted").notNull().default(false),
  updatedBy: text("updated_by").references(() => user.id, { onDelete: "set null" }),
  updatedAt: updatedAt(),
});

export const allowedModel = pgTable(
  "allowed_model",
  {
    provider: text("provider").notNull(),
    model: text("model").notNull(),
    updatedBy: text("updated_by").references(() => user.id, { onDelete: "set null" }),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.model] })],
);

/**
 * The sessions that ended when an admin disabled their account, by their token's SHA-256 (hex):
 * a browser that comes back with one is told why it was signed out. Only that browser holds the
 * token, so no one else learns of it. A row counts until `expires_at`, when its session would
 * have run out anyway (the next disable drops those past it); all of an account's go when it is
 * enabled again or deleted.
 */
export const disabledSession = pgTable(
  "disabled_session",
  {
    tokenHash: text("token_hash").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => user.id, { onDelete: "cascade" }),
    /** The ended session's own expiry: past it, its cookie would have been signed out anyway. */
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("disabled_session_user_id_idx").on(t.userId)],
);

/** rate-limiter-flexible's Drizzle store: one row per key, points spent until `expire`. */
export const rateLimit = pgTable("rate_limit", {
  key: text("key").primaryKey(),
  points: integer("points").notNull(),
  expire: timestamp("expire", { withTimezone: true }),
});

export type User = typeof user.$inferSelect;
export type Chat = typeof chat.$inferSelect;
export type Message = typeof message.$inferSelect;
export type CompactionEvent = typeof compactionEvent.$inferSelect;
export type MessageBranch = typeof messageBranch.$inferSelect;
