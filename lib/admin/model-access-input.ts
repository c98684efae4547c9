/**
 * What an admin may send to change who can use which models (PUT /api/admin/models/access):
 * restrict a provider to its allowed models (or lift that), or allow or disallow one model.
 */
import { z } from "zod";
import { modelName } from "./override-input";

const provider = modelName(100);

export const modelAccessInput = z.union([
  z.strictObject({ provider, restricted: z.boolean() }),
  z.strictObject({
    provider,
    model: modelName(200),
    allowed: z.boolean(),
  }),
]);

export type ModelAccessInput = z.infer<typeof modelAccessInput>;

/** The allow-list as the admin page reads it. */
export type ModelAccessView = {
  /** Providers whose models users may use only when allowed one by one. */
  restrictedProviders: string[];
  /** `provider:model` ids allowed on those providers. */
  allowedModelIds: string[];
};
