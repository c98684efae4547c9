import { DEFAULT_CHAT_TITLE } from "@/lib/chat/schemas";
import { titleFromMessage } from "@/lib/chat/title";
import type { Db } from "@/lib/db/client";
import { noteTurnOnChat } from "@/lib/db/queries/chats";
import { loadHistory } from "@/lib/db/queries/messages";
import type { Chat } from "@/lib/db/schema";
import { type FoldUIMessage, messageText, rowToUIMessage } from "@/lib/message/ui-message";
import { applyTurnRequest } from "./apply-request";
import type { TurnRequest } from "./request";

export type PreparedTurn = { chat: Chat; history: FoldUIMessage[] };

/**
 * Steps 2–3 of a turn: apply the request to the stored history, load it, and
 * note the turn on the chat (its model, a first title, its place in the list).
 */
export async function prepareTurn(
  db: Db,
  chat: Chat,
  request: TurnRequest,
  modelId: string,
): Promise<PreparedTurn> {
  await applyTurnRequest(db, chat, request);
  const history = (await loadHistory(db, chat.id)).map(rowToUIMessage);
  const firstUser = history.find((m) => m.role === "user");
  const noted = await noteTurnOnChat(db, chat.id, {
    modelId: chat.modelId !== modelId ? modelId : undefined,
    title:
      chat.title === DEFAULT_CHAT_TITLE && firstUser
        ? titleFromMessage(messageText(firstUser))
        : undefined,
  });
  return { chat: noted ?? chat, history };
}
