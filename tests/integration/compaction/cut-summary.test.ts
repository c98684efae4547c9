import { afterAll, beforeEach, expect, it, vi } from "vitest";

// A real OpenAI-compatible server with a 4,096-token window; it also answers as the summarizer.
const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW, {
    // The fold happens where this file asks for it, not in the background after a reply.
    COMPACTION_BACKGROUND: "false",
  });
});

import { register } from "../../helpers/auth";
import {
  chatRow,
  compactNowCall,
  isSummaryRequest,
  summarizerPrompt,
} from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { longMessage, newChat, sendTurn } from "../../helpers/turns";

const MODEL = "fake:small";

afterAll(() => fake.close());
beforeEach(() => fake.reset());

describeEachDriver("a summary the summarizer's output limit cuts short", (use) => {
  it("asks again for the sections it did not finish, and keeps what the folded messages add to them", async () => {
    const database = use();
    const { browser } = await register(database, "cut-summary@example.com");
    const chatId = await newChat(database, browser);
    for (let turn = 0; turn < 5; turn++) {
      await sendTurn(database, browser, { chatId, modelId: MODEL, text: longMessage(turn) });
    }
    // The first answer runs out in its third section; the second writes the ones left.
    fake.script(
      {
        text: [
          "## Goal & open requests",
          "- Move the importer to the new cluster.",
          "## Constraints & preferences",
          '- "never drop a row"',
          "## Current state & next step",
          "- The reader is ported; the wri",
        ].join("\n"),
        finishReason: "length",
      },
      {
        text: [
          "## Current state & next step",
          "- Reader ported; the row writer is next.",
          "## Decisions & facts",
          "- Batches of 500 rows.",
          "## Artifacts & references",
          "- /srv/import/writer.ts",
          "## Errors & fixes",
          "- EACCES on /var/log/import: fixed with chown.",
        ].join("\n"),
      },
    );
    expect((await compactNowCall(database, browser, chatId, { modelId: MODEL })).status).toBe(200);

    const asked = fake.requests.filter(isSummaryRequest);
    expect(asked).toHaveLength(2);
    const second = summarizerPrompt(asked[1] ?? { messages: [] });
    expect(second).toContain("Write only these sections");
    expect(second).toContain(
      "## Current state & next step\n## Decisions & facts\n## Artifacts & references\n## Errors & fixes\n",
    );

    const summary = (await chatRow(database.db, chatId)).contextSummary ?? "";
    expect(summary).toContain("- Move the importer to the new cluster.");
    expect(summary).toContain('- "never drop a row"');
    expect(summary).toContain("- Reader ported; the row writer is next.");
    expect(summary).not.toContain("the wri\n");
    expect(summary).toContain("- Batches of 500 rows.");
    expect(summary).toContain("- EACCES on /var/log/import: fixed with chown.");
  });
});
