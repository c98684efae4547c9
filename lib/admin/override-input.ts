/**
 * What an admin may send to override a model's window (DESIGN §6, step 1): plain zod with no
 * server imports, so the editor in the browser checks a draft by the same rules as the route.
 */
import { z } from "zod";
import { windowTooSmall } from "@/lib/context/budget";

/** Far above any model today, low enough that a stray extra digit is caught. */
export const MAX_OVERRIDE_TOKENS = 10_000_000;
const MAX_PROVIDER_CHARS = 100;
const MAX_MODEL_CHARS = 200;

/**
 * A provider or model id as its list names it: none starts or ends with a space, and one that
 * did would match no model (the override would apply to nothing, a row of its own).
 */
export const modelName = (max: number) =>
  z
    .string()
    .min(1, { error: "is required" })
    .max(max)
    .refine((value) => value.trim() !== "", { error: "is required", abort: true })
    .refine((value) => value.trim() === value, { error: "must not start or end with a space" });

const tokenLimit = z
  .number({
    error: (issue) =>
      issue.input === undefined
        ? "is required (a number, or null for none)"
        : "must be a number or null",
  })
  .int({ error: "must be a whole number of tokens" })
  .positive({ error: "must be above zero" })
  .max(MAX_OVERRIDE_TOKENS, { error: "must be at most 10,000,000 tokens" });

/**
 * PUT /api/admin/models. Either number may be null: that one then comes from the rest of the
 * chain; both null clears the override. An output ceiling must leave room for some input, and
 * a window room for the reply's reserve plus a short conversation (`windowTooSmall`).
 */
export const overrideInput = z
  .strictObject({
    provider: modelName(MAX_PROVIDER_CHARS),
    model: modelName(MAX_MODEL_CHARS),
    contextWindow: tokenLimit.nullable(),
    maxOutputTokens: tokenLimit.nullable(),
    /**
     * The override the editor began from: its `updatedAt`, or null for none. Given, the save is
     * refused (409) when the override is another now (another admin saved in between), rather
     * than putting back the field that admin did not touch here.
     */
    from: z.iso.datetime({ offset: true }).nullable().optional(),
  })
  .refine(
    (input) =>
      input.contextWindow === null ||
      input.maxOutputTokens === null ||
      input.maxOutputTokens < input.contextWindow,
    { error: "must be below the context window", path: ["maxOutputTokens"] },
  )
  .superRefine((input, ctx) => {
    if (input.contextWindow === null) return;
    const reason = windowTooSmall({
      contextWindow: input.contextWindow,
      maxOutputTokens: input.maxOutputTokens,
    });
    if (reason) ctx.addIssue({ code: "custom", message: reason, path: ["contextWindow"] });
  });

export type OverrideInput = z.infer<typeof overrideInput>;

/** DELETE /api/admin/models/observed: the model whose observed window to forget. */
export const modelRefInput = z.strictObject({
  provider: modelName(MAX_PROVIDER_CHARS),
  model: modelName(MAX_MODEL_CHARS),
});

export type ModelRefInput = z.infer<typeof modelRefInput>;

export function clearsOverride(input: Pick<OverrideInput, "contextWindow" | "maxOutputTokens">) {
  return input.contextWindow === null && input.maxOutputTokens === null;
}
