import { expect, it, vi } from "vitest";

// The operator names a summarizer whose provider has no key here (no OPENAI_API_KEY).
vi.hoisted(() => {
  process.env.COMPACTION_SUMMARIZER_MODELS = "openai:gpt-4o-mini";
  delete process.env.OPENAI_API_KEY;
});

import { getLanguageModel } from "@/lib/ai/providers";
import { summarizerModels } from "@/lib/chat/summarizer-models";
import { withDatabase } from "@/lib/db/client";
import { describeEachDriver } from "../../helpers/databases";

describeEachDriver("COMPACTION_SUMMARIZER_MODELS none of which is available", (use) => {
  it("the chat's own model summarizes, rather than every fold falling back to a digest", async () => {
    const database = use();
    const models = await withDatabase(database, () =>
      summarizerModels("demo:demo", getLanguageModel, database.db),
    );
    expect(models.map((m) => m.id)).toEqual(["demo:demo"]);
  });
});
