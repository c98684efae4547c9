import type { Db } from "../client";
import { quotaDefault } from "../schema";

export type QuotaLimits = { dailyTokenLimit: number | null; dailyMessageLimit: number | null };

const SINGLE_ROW_ID = 1;
const UNLIMITED: QuotaLimits = { dailyTokenLimit: null, dailyMessageLimit: null };

/** The admin-set defaults; no row yet means no limits. */
export async function getQuotaDefaults(db: Db): Promise<QuotaLimits> {
  const [row] = await db
    .select({
      dailyTokenLimit: quotaDefault.dailyTokenLimit,
      dailyMessageLimit: quotaDefault.dailyMessageLimit,
    })
    .from(quotaDefault);
  return row ?? UNLIMITED;
}

/**
 * Stores the limits given (those left out keep what they were: none, before the first save) and
 * answers the defaults as they now stand.
 */
export async function saveQuotaDefaults(
  db: Db,
  limits: Partial<QuotaLimits>,
  updatedBy: string,
): Promise<QuotaLimits> {
  const values = { ...limits, updatedBy, updatedAt: new Date() };
  const [row] = await db
    .insert(quotaDefault)
    .values({ id: SINGLE_ROW_ID, ...values })
    .onConflictDoUpdate({ target: quotaDefault.id, set: values })
    .returning({
      dailyTokenLimit: quotaDefault.dailyTokenLimit,
      dailyMessageLimit: quotaDefault.dailyMessageLimit,
    });
  return row ?? UNLIMITED;
}
