import { afterAll, beforeEach, expect, it, vi } from "vitest";

// Message ids are the client's and unique across the server: a request naming another user's
// must not tell that it exists.
const fake = await vi.hoisted(async () => {
  const { SMALL_WINDOW, startFakeProvider } = await import("../../helpers/fake-provider");
  return startFakeProvider(SMALL_WINDOW, { COMPACTION_BACKGROUND: "false" });
});

import { register } from "../../helpers/auth";
import { historyOf } from "../../helpers/compaction";
import { describeEachDriver } from "../../helpers/databases";
import { newChat, postRegenerate, sendTurn } from "../../helpers/turns";

const MODEL = "fake:small";
afterAll(() => fake.close());
beforeEach(() => fake.reset());

describeEachDriver("another user's message id", (use) => {
  it("is answered by a regenerate as an id that exists nowhere", async () => {
    const database = use();
    const alice = (await register(database, "alice@example.com")).browser;
    const bob = (await register(database, "bob@example.com")).browser;
    const hers = await newChat(database, alice);
    await sendTurn(database, alice, { chatId: hers, modelId: MODEL, text: "Alice's question." });
    const herReply = (await historyOf(database.db, hers)).at(-1);
    const his = await newChat(database, bob);
    await sendTurn(database, bob, { chatId: his, modelId: MODEL, text: "Bob's question." });

    const answer = async (messageId: string) => {
      const response = await postRegenerate(database, bob, {
        chatId: his,
        modelId: MODEL,
        messageId,
      });
      return { status: response.status, body: await response.text() };
    };
    const unknown = await answer("no-such-message-anywhere");
    expect(unknown.status).toBe(404);
    expect(await answer(String(herReply?.id))).toEqual(unknown);

    // One of Bob's own chats still holds his: that page is behind, and says so.
    const other = await newChat(database, bob);
    await sendTurn(database, bob, { chatId: other, modelId: MODEL, text: "Elsewhere." });
    const ownReply = (await historyOf(database.db, other)).at(-1);
    expect((await answer(String(ownReply?.id))).status).toBe(409);
  });
});
