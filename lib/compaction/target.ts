import { foldTrigger, type ProjectionInput, viewTokens } from "./projection";
import { applyHardWall, type ModelView } from "./view";

/** What a fold does about the target (DESIGN §7): cut what it keeps to reach it, or say why not. */

/**
 * A compaction must land at or under the target, or the next turn fires again
 * (DESIGN §7): when the kept messages are too big for that, the hard wall cuts
 * them (never the latest user message or the summary) to the largest cap that
 * reaches it. The cap is stored with the reply and holds until the next
 * compaction, so nothing grows back.
 *
 * When no cap reaches it (the summary and the latest message alone are over the target), nothing
 * is cut: a cap then would shorten to a few lines every message no summary holds (a document
 * pasted last, every reply after it) for as long as it holds, while the next compaction, which
 * folds them, would come turns later (the count of a cut request grows slowly). Left whole, the
 * view fits its budget and the next turn folds what is no longer the latest message.
 */
export function reachTarget(
  input: ProjectionInput,
  view: ModelView,
): { view: ModelView; tokens: number } {
  const { budget, ratio, estimator } = input;
  const tokens = viewTokens(input, view.messages);
  if (tokens <= budget.target || view.hardWallCapTokens !== null) return { view, tokens };
  const targetRoom = Math.max(0, Math.floor(budget.target / ratio) - input.overheadTokens);
  const wall = applyHardWall(view.messages, targetRoom, estimator, null, view.pinnedIds);
  if (!wall.fits) return { view, tokens };
  const walled = { ...view, messages: wall.messages, hardWallCapTokens: wall.capTokens };
  return { view: walled, tokens: viewTokens(input, walled.messages) };
}

/**
 * Why a fold landed over the target: what no fold shortens (the pinned messages and the latest
 * user message beside a full summary) is over it, and the chat then folds later (`foldTrigger`);
 * or the recent turns kept verbatim are large.
 */
export function missedTargetNote(
  input: ProjectionInput,
  view: ModelView,
  tokensAfter: number,
): string {
  const missed = `could not reach the target (${tokensAfter} > ${input.budget.target} tokens)`;
  // The chat's trigger is above the budget's exactly when what a fold leaves is over the target.
  const trigger = foldTrigger(input, view);
  if (trigger === input.budget.trigger)
    return `${missed}: the recent turns kept verbatim are large`;
  return `${missed}: the pinned messages and the latest user message are never folded and take most of the room, so the next fold comes at ${trigger} tokens`;
}
