import { readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Every route handler under app/api, found by reading the filesystem, so a route added
 * tomorrow is covered by the security suite without anyone listing it.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const API_DIR = path.join(ROOT, "app", "api");
const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
export const STATE_CHANGING = ["POST", "PUT", "PATCH", "DELETE"] as const;

type Handler = (request: Request, context: { params: Promise<unknown> }) => Promise<Response>;

export type ApiRoute = {
  /** e.g. `/api/chats/[id]/compact`. */
  pattern: string;
  /** Dynamic segments in order: `id`, or `...all` for a catch-all. */
  params: string[];
  handlers: Partial<Record<(typeof HTTP_METHODS)[number], Handler>>;
  /** better-auth's own routes: it checks their origin itself. */
  betterAuth: boolean;
};

function routeFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return routeFiles(full);
    return /^route\.(ts|tsx|js|mjs)$/.test(entry.name) ? [full] : [];
  });
}

export async function apiRoutes(): Promise<ApiRoute[]> {
  const routes: ApiRoute[] = [];
  for (const file of routeFiles(API_DIR).sort()) {
    const pattern = `/${path.relative(path.join(ROOT, "app"), path.dirname(file)).split(path.sep).join("/")}`;
    const params = [...pattern.matchAll(/\[([^\]]+)\]/g)].map((m) => m[1] ?? "");
    const module = (await import(file)) as Record<string, unknown>;
    const handlers: ApiRoute["handlers"] = {};
    for (const method of HTTP_METHODS) {
      const handler = module[method];
      if (typeof handler === "function") handlers[method] = handler as Handler;
    }
    routes.push({ pattern, params, handlers, betterAuth: pattern.startsWith("/api/auth/") });
  }
  return routes;
}

/** `(route, method)` pairs that change state: what CSRF protection must cover. */
export function stateChangingEndpoints(routes: readonly ApiRoute[]) {
  return routes.flatMap((route) =>
    STATE_CHANGING.filter((method) => route.handlers[method]).map((method) => ({
      route,
      method,
      handler: route.handlers[method] as Handler,
    })),
  );
}

/** A concrete path for a pattern: each `[name]` from `values`, a catch-all joined by `/`. */
export function fillPath(pattern: string, values: Record<string, string>): string {
  return pattern.replace(/\[([^\]]+)\]/g, (_, name: string) =>
    name.startsWith("...")
      ? (values[name] ?? "x")
      : // A URL cannot carry a lone surrogate; the handler still gets it through `params`.
        encodeURIComponent((values[name] ?? "00000000-0000-4000-8000-000000000000").toWellFormed()),
  );
}

/** The `params` object Next would pass for a filled path. */
export function paramsFor(pattern: string, values: Record<string, string>) {
  const params: Record<string, string | string[]> = {};
  for (const [, name] of pattern.matchAll(/\[([^\]]+)\]/g)) {
    if (!name) continue;
    if (name.startsWith("...")) params[name.slice(3)] = (values[name] ?? "x").split("/");
    else params[name] = values[name] ?? "00000000-0000-4000-8000-000000000000";
  }
  return params;
}
