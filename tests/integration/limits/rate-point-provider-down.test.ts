import { expect, it, vi } from "vitest";

vi.hoisted(() => {
  process.env.RATE_LIMIT_TURNS_PER_MINUTE = "2";
  process.env.DEMO_MODEL = "always";
  // An OpenAI-compatible server that is not answering (nothing listens on port 9).
  process.env.OPENAI_COMPATIBLE_BASE_URL = "http://127.0.0.1:9/v1";
  process.env.OPENAI_COMPATIBLE_NAME = "down";
});

import { register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { newChat, sendTurn } from "../../helpers/turns";

describeEachDriver("turn rate point when the model's provider cannot be checked", (use) => {
  it("gives the point back for a 503 'provider not answering': retrying as told is not rate limited", async () => {
    const database = use();
    const { browser } = await register(database, "retry@example.com");
    const chatId = await newChat(database, browser);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const { response } = await sendTurn(database, browser, {
        chatId,
        modelId: "down:some-model",
        text: `hello ${i}`,
      });
      statuses.push(response.status);
    }
    // Each is answered 503 "cannot be checked right now ... Try again in a moment": nothing was
    // done, so none spends one of the two turns a minute.
    expect(statuses).toEqual([503, 503, 503]);
  });
});
