import type { z } from "zod";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";

const MAX_JSON_BODY_BYTES = 1_000_000;

type Context<P> = { params: Promise<P> };

/**
 * Wraps a route handler so that every failure is answered in one place:
 * AppError → its status, anything else → a logged 500 with no internals.
 */
export function route<P = Record<string, never>>(
  handler: (request: Request, context: Context<P>) => Promise<Response>,
) {
  return async (request: Request, context: Context<P>): Promise<Response> => {
    try {
      return await handler(request, context);
    } catch (error) {
      if (error instanceof AppError) return error.toResponse();
      log.error({ err: error, url: request.url, method: request.method }, "unhandled route error");
      return Response.json(
        { error: { code: "internal", message: "Something went wrong on our side." } },
        { status: 500 },
      );
    }
  };
}

/** Reads a JSON body with a size limit and validates it; every failure is a clear 4xx. */
export async function readJson<S extends z.ZodType>(
  request: Request,
  schema: S,
  options: { maxBytes?: number; emptyAs?: unknown } | number = {},
): Promise<z.infer<S>> {
  const { maxBytes = MAX_JSON_BODY_BYTES, emptyAs } =
    typeof options === "number" ? { maxBytes: options } : options;
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) {
    throw new AppError("payload_too_large:body", `The request body is over ${maxBytes} bytes.`);
  }
  const text = await request.text();
  if (Buffer.byteLength(text) > maxBytes) {
    throw new AppError("payload_too_large:body", `The request body is over ${maxBytes} bytes.`);
  }
  let raw: unknown = emptyAs;
  try {
    if (emptyAs === undefined || text.trim() !== "") raw = JSON.parse(text);
  } catch {
    throw new AppError("bad_request:body", "The request body is not valid JSON.");
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
    throw new AppError("bad_request:body", `${where}${issue?.message ?? "invalid input"}`);
  }
  return parsed.data;
}
