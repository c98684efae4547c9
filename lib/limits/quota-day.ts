/**
 * Quotas count per UTC day, so every instance agrees on the boundary whatever its time zone,
 * and a user is told one reset time.
 */

/** The UTC calendar day of `now`, as Postgres `date` text (YYYY-MM-DD). */
export function usageDayOf(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** The next UTC midnight after `now`: when today's quota resets. */
export function quotaResetAt(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

/** "3 h 12 min", "45 min", "under a minute": how long until `then`. */
export function formatWait(now: Date, then: Date): string {
  const minutes = Math.ceil((then.getTime() - now.getTime()) / 60_000);
  if (minutes <= 1) return "under a minute";
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  if (hours === 0) return `${rest} min`;
  return rest === 0 ? `${hours} h` : `${hours} h ${rest} min`;
}
