"use client";

import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, generateId } from "ai";
import { AlertCircle, RotateCcw } from "lucide-react";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { BranchSwitch } from "@/lib/chat/branches";
import type { ChatContext } from "@/lib/chat/context";
import { MESSAGE_MAX_CHARS } from "@/lib/message/limits";
import { isPinnedByUser, pinnedAs } from "@/lib/message/pins";
import { type FoldUIMessage, messageText } from "@/lib/message/ui-message";
import { CompactConfirm } from "../context/compact-confirm";
import { ContextRing } from "../context/context-ring";
import { useChatContext } from "../context/use-chat-context";
import { useCompactNow } from "../context/use-compact-now";
import { EditConfirm } from "../memory/edit-confirm";
import { MemoryPanel } from "../memory/memory-panel";
import { MessageMemoryBar } from "../memory/message-memory-bar";
import { errorText, JSON_HEADERS, useChatMemory } from "../memory/use-chat-memory";
import { type Rewrite, useSafeEdit } from "../memory/use-safe-edit";
import { apiFetch } from "../outage/api-fetch";
import { refreshIfReachable } from "../outage/refresh-if-reachable";
import { serverClock } from "../server-clock";
import { ModelLabelsProvider } from "../stats/model-labels";
import { isHoverless } from "../ui/use-hoverless";
import { Composer } from "./composer";
import { useFirstMessage } from "./first-message";
import { keepInPlace } from "./keep-in-place";
import { limitNoticeOf, readableError, serverErrorOf } from "./limit-notice";
import { RunningTrace } from "./message/compaction-trace";
import { createEditDrafts, reopenEdit } from "./message/edit-drafts";
import { answerBegun } from "./message/tool-state";
import { MessageList } from "./message-list";
import { MessageView } from "./message-view";
import { ModelPicker } from "./model-picker";
import { focusComposer } from "./skip-link";
import { isEmptyReply, withStoppedReplyAsStored } from "./stopped-reply";
import {
  fetchStoredPage,
  isCompactionEntry,
  messageBeingAnswered,
  olderBeforePage,
  type StoredPage,
  withCompactionEntry,
  withEntriesPutBack,
  withStoredTail,
} from "./stored-tail";
import { Thinking } from "./thinking";
import { useFocusRescue } from "./use-focus-rescue";
import { useLiveCompaction } from "./use-live-compaction";
import { type PickableModel, useModels } from "./use-models";
import { useOlderMessages } from "./use-older-messages";
import { useReplyInProgress } from "./use-reply-in-progress";
import { CONTINUE_TEXT, useStopReply } from "./use-stop-reply";
import { useStoredMessagesAfterRefusal } from "./use-stored-messages-after-refusal";

const NO_MODELS: PickableModel[] = [];
/** How long a model pick's save may take before it counts as failed. */
const MODEL_SAVE_TIMEOUT_MS = 15_000;

type Props = {
  chatId: string;
  /** The newest page of the chat; older pages load as the user scrolls up. */
  initialMessages: FoldUIMessage[];
  /** Messages older than `initialMessages` exist. */
  initialHasMore: boolean;
  initialModelId: string | null;
  /** The page was loaded while a reply to this chat was still being written. */
  initialReplying?: boolean;
  /** The chat has no title given yet: its first turn names it. */
  untitled?: boolean;
};

export function ChatView({
  chatId,
  initialMessages,
  initialHasMore,
  initialModelId,
  initialReplying,
  untitled = false,
}: Props) {
  const router = useRouter();
  const models = useModels();
  const [pickedModelId, setPickedModelId] = useState(initialModelId);
  // The model the server has for the chat: the memory's room for notes is that model's.
  const [savedModelId, setSavedModelId] = useState(initialModelId);
  const modelId = pickedModelId ?? (models.status === "ready" ? models.defaultModelId : null);
  const [usageVersion, setUsageVersion] = useState(0);
  const usage = useChatContext(chatId, modelId, usageVersion);
  const modelRef = useRef(modelId);
  modelRef.current = modelId;

  // This page's latest request, by the id its Stop names: a Stop that comes late (the request
  // failed meanwhile) cannot stop the Retry after it. Kept once the request ends (a Stop clicked
  // as it ends still names it); none for a reply the page only follows since it loaded.
  const attemptRef = useRef<string | undefined>(undefined);
  // The next request's `throughId`: set by an edit or a regenerate the server counted.
  const throughRef = useRef<string | null>(null);
  // What was sent last: a send the server refuses goes back into the message box
  // (cleared once it is answered, and by anything else sent since).
  const lastSent = useRef("");
  // The whole timeline before an edit or a regenerate rewrote it, until it is answered or
  // another request is sent (its reply failed, say: the rewrite stands).
  const beforeRewrite = useRef<FoldUIMessage[] | null>(null);
  // An edit sent, until it is answered or another request is sent: a refused one opens its box
  // again, holding it.
  const sentEdit = useRef<{ messageId: string; text: string } | null>(null);
  // Set by a rewrite for its own request: any other request leaves the two above behind.
  const rewriteAsked = useRef(false);
  const transport = useMemo(
    () =>
      new DefaultChatTransport<FoldUIMessage>({
        api: "/api/chat",
        fetch: apiFetch,
        // Only the new message travels; the server holds the history.
        prepareSendMessagesRequest: ({ messages, trigger, messageId }) => {
          const rewrite = rewriteAsked.current;
          if (rewriteAsked.current) rewriteAsked.current = false;
          else {
            beforeRewrite.current = null;
            sentEdit.current = null;
          }
          const attemptId = generateId();
          attemptRef.current = attemptId;
          const modelId = modelRef.current ?? undefined;
          // An edit's or a regenerate's: the chat's last message when the server counted what
          // it moves. A new message's: the last one this page shows before it, so a chat that
          // went on in another tab is not answered as if this page had shown it.
          const counted = throughRef.current ?? undefined;
          throughRef.current = null;
          const throughId =
            counted ?? (trigger === "submit-message" && !rewrite ? messages.at(-2)?.id : undefined);
          return {
            body:
              trigger === "submit-message"
                ? {
                    trigger,
                    chatId,
                    modelId,
                    attemptId,
                    message: messages[messages.length - 1],
                    throughId,
                  }
                : { trigger, chatId, modelId, attemptId, messageId, throughId },
          };
        },
        // A page opened mid-reply follows the live reply (from any instance).
        prepareReconnectToStreamRequest: () => ({ api: `/api/chats/${chatId}/stream` }),
      }),
    [chatId],
  );

  const [editDrafts] = useState(createEditDrafts);
  const [resumeOnLoad] = useState(initialReplying === true);
  // A reply that broke off with an error the server sent: it was not stored (lib/turn/persist.ts),
  // so it leaves the page when the next message goes instead of standing as an answer.
  const unsavedReply = useRef<string | null>(null);
  // Whether the request's failure was an error the server sent (an error chunk reads as a plain
  // Error): a connection the browser lost (a TypeError, whatever its words) may have left the
  // reply to be stored.
  const failedOnServer = useRef(false);
  // Set below, once the hooks it calls exist: what the page does when its reply's stream drops.
  const afterDisconnect = useRef(() => {});
  const {
    messages,
    sendMessage,
    regenerate,
    stop,
    status,
    error,
    clearError,
    setMessages,
    resumeStream,
  } = useChat<FoldUIMessage>({
    id: chatId,
    messages: initialMessages,
    transport,
    // Only a reply running when the page loaded: a refresh that finds one (another tab's)
    // does not take it over mid-way (use-reply-in-progress follows it instead).
    resume: resumeOnLoad,
    onError: (error) => {
      failedOnServer.current = !(error instanceof TypeError);
    },
    onFinish: ({ message, isError, isDisconnect }) => {
      unsavedReply.current =
        isError && !isDisconnect && failedOnServer.current && message.role === "assistant"
          ? message.id
          : null;
      failedOnServer.current = false;
      // Answered (or stopped): it was stored. A refusal keeps it to put back in the box.
      if (!isError) {
        // A stopped reply shows as stored: one that wrote nothing is no reply.
        setMessages((list) => withStoppedReplyAsStored(list, message));
        lastSent.current = "";
        beforeRewrite.current = null;
        sentEdit.current = null;
      }
      setUsageVersion((v) => v + 1);
      // The server's parts of the page (the chat's place and title in the list) follow what was
      // stored; after a failure only from a Fold that answers (refreshIfReachable): the
      // browser's error page would take the chat's place, and the message to go back into its
      // box with it. A dropped stream is followed up once Fold is back (afterDisconnect).
      if (isDisconnect) afterDisconnect.current();
      else if (!isError) router.refresh();
      else void refreshIfReachable(router.refresh);
    },
  });

  const busy = status === "submitted" || status === "streaming";
  // A first turn names its chat before its reply starts: the list and the header show the name
  // as the reply begins, not only once it ends. Once per page: a first message with no words to
  // name it by ("---") leaves the chat untitled, and every reply would refresh the page.
  const namedOnce = useRef(false);
  useEffect(() => {
    if (!untitled || status !== "streaming" || namedOnce.current) return;
    namedOnce.current = true;
    router.refresh();
  }, [untitled, status, router]);
  // "Thinking…" from the send until the reply begins to answer: through its reasoning too.
  const lastMessage = messages.at(-1);
  const stillThinking =
    status === "submitted" ||
    (status === "streaming" && lastMessage?.role === "assistant" && !answerBegun(lastMessage));
  const busyRef = useRef(busy);
  busyRef.current = busy;
  // useChat holds the newest page and the live turn; older pages sit in front of it.
  const history = useOlderMessages(chatId, initialHasMore);
  const timeline = useMemo(
    () => (history.older.length > 0 ? [...history.older, ...messages] : messages),
    [history.older, messages],
  );
  const [followRequest, setFollowRequest] = useState(0);
  const latestMessages = useRef(messages);
  latestMessages.current = messages;
  const keepOlder = history.keep;
  // What the server sends back is its newest page: it replaces only the end of the timeline,
  // older pages included (an edit or a regenerate left useChat only the newest messages).
  const setStoredTail = useCallback(
    (page: FoldUIMessage[]) => {
      const before = latestMessages.current;
      keepOlder((older) => olderBeforePage(older, before, page));
      setMessages((shown) => withStoredTail(shown, page));
    },
    [setMessages, keepOlder],
  );
  const takeOlder = history.takeAll;
  const remembered = useChatMemory(chatId, usageVersion, savedModelId);
  const armFocusRescue = useFocusRescue();
  // A summary that holds more than the user's own notes: this chat starts from another's.
  const continued = Boolean(remembered.memory?.narrative || remembered.memory?.ledger.length);
  // A chat action that failed (a pin, a version switch, the model): one line to dismiss.
  const [actionProblem, setActionProblem] = useState<string | null>(null);
  const watermark = remembered.memory?.watermark ?? undefined;
  const safeEdit = useSafeEdit(
    chatId,
    useCallback(
      // An edit or a regenerate rewrites history from a message useChat must hold: hand it the
      // older pages first.
      (rewrite: Rewrite) => {
        // A message sent while the server was asked how much this moves: it answers first.
        if (busyRef.current) return false;
        // So does a version switch on its way (the rewrite is of the version the page shows).
        if (switching.current) {
          setActionProblem("Another version is being shown: try again once it is.");
          return false;
        }
        const shown = [...history.older, ...latestMessages.current];
        // A switch that landed while it was asked about took the message away with its version.
        if (!shown.some((m) => m.id === rewrite.messageId)) {
          setActionProblem("That message is not in the version shown now.");
          return false;
        }
        const older = takeOlder();
        if (older.length > 0) setMessages((held) => [...older, ...held]);
        lastSent.current = "";
        // What the timeline holds before the rewrite: a refused one goes back to it.
        beforeRewrite.current = shown;
        rewriteAsked.current = true;
        armFocusRescue();
        sentEdit.current =
          rewrite.kind === "edit" ? { messageId: rewrite.messageId, text: rewrite.text } : null;
        throughRef.current = rewrite.throughId ?? null;
        // The SDK drops everything after the message rewritten; the server keeps the entries of
        // compactions there while their summary stands (its watermark is before that message).
        const from = shown.findIndex((m) => m.id === rewrite.messageId);
        const rolledBack =
          watermark !== undefined && shown.slice(from).some((m) => m.id === watermark);
        const entries = rolledBack ? [] : shown.slice(from + 1).filter(isCompactionEntry);
        const sent =
          rewrite.kind === "edit"
            ? sendMessage({ text: rewrite.text, messageId: rewrite.messageId })
            : regenerate({ messageId: rewrite.messageId });
        void sent.then(() => {
          if (entries.length > 0) setMessages((now) => withEntriesPutBack(now, entries, shown));
        });
        return true;
      },
      [sendMessage, regenerate, setMessages, history.older, takeOlder, armFocusRescue, watermark],
    ),
  );
  const watermarkIndex = watermark ? timeline.findIndex((m) => m.id === watermark) : -1;

  /** Pins or unpins a message; the problem, if it failed. */
  async function pinOne(messageId: string, pinned: boolean): Promise<string | null> {
    const problem = await remembered.pin(messageId, pinned);
    if (problem) {
      // The message may be gone (another tab edited or switched versions): show what is stored.
      void fetchStoredPage(chatId).then((page) => {
        if (page && !busyRef.current) setStoredTail(page.messages);
      });
      return problem;
    }
    // Wherever it is shown: the newest page, or the older ones scrolled up to.
    const marked = (m: FoldUIMessage) => ({ ...m, metadata: pinnedAs(m.metadata, pinned) });
    setMessages((list) => list.map((m) => (m.id === messageId ? marked(m) : m)));
    history.update(messageId, marked);
    setUsageVersion((v) => v + 1);
    return null;
  }

  async function pinMessage(messageId: string, pinned: boolean) {
    setActionProblem(await pinOne(messageId, pinned));
  }

  // A version switch on its way: Send, Retry, Continue, edits and a second switch wait for its
  // answer (which replaces the page), so what is sent goes to the version the page then shows.
  // The message box still takes text and keeps its focus.
  // The ref answers at once (a second click, a rewrite due in the same tick); the state redraws.
  const switching = useRef(false);
  const [switchPending, setSwitchPending] = useState(false);
  // The arrow pressed, and how far down the screen its switch was: once the version asked for
  // is drawn, the switch is put back there and the arrow given the focus again, so the next
  // press (mouse or keyboard) finds it where it was.
  const switchedFrom = useRef<{
    /** The switch's turn: its user message's id (`data-branch`). */
    branch: string;
    arrow: string;
    top: number;
    /** The version's messages, by count and last id: the effect waits until they are drawn. */
    drawn?: { count: number; lastId: string | undefined };
  } | null>(null);
  const [stayRequest, setStayRequest] = useState(0);
  function switchBranch(messageId: string, position: number, arrow: HTMLElement) {
    if (switching.current) return;
    switching.current = true;
    setSwitchPending(true);
    // Cleared at the click, not on the answer: what is refused meanwhile stays said.
    setActionProblem(null);
    const top = arrow.closest("[data-branch]")?.getBoundingClientRect().top ?? 0;
    void showVersion(messageId, position, {
      arrow: arrow.getAttribute("aria-label") ?? "",
      top,
    }).finally(() => {
      switching.current = false;
      setSwitchPending(false);
    });
  }
  async function showVersion(
    messageId: string,
    position: number,
    from: { arrow: string; top: number },
  ) {
    const response = await apiFetch(`/api/chats/${chatId}/branches`, {
      method: "POST",
      headers: JSON_HEADERS,
      body: JSON.stringify({ messageId, position }),
    });
    if (!response.ok) {
      setActionProblem(await errorText(response, "That version could not be shown."));
      return;
    }
    const shown = (await response.json()) as {
      messages: FoldUIMessage[];
      hasMore?: boolean;
      branches?: BranchSwitch[];
    };
    // The server answers the version shown from the switched message on (older messages load
    // as the user scrolls up): it replaces every page held. Its switches come with it, so the
    // one pressed is drawn with the messages, not a read later.
    history.restart(shown.hasMore === true);
    switchedFrom.current = {
      ...from,
      branch: messageId,
      drawn: { count: shown.messages.length, lastId: shown.messages.at(-1)?.id },
    };
    setStayRequest((n) => n + 1);
    setMessages(shown.messages);
    if (shown.branches) remembered.setBranches(shown.branches);
    setUsageVersion((v) => v + 1);
  }
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once the new version is drawn
  useEffect(() => {
    const from = switchedFrom.current;
    if (!from?.drawn) return;
    if (messages.length !== from.drawn.count || messages.at(-1)?.id !== from.drawn.lastId) return;
    switchedFrom.current = null;
    const find = () => document.querySelector(`[data-branch="${CSS.escape(from.branch)}"]`);
    const arrow = find()?.querySelector<HTMLElement>(`[aria-label="${from.arrow}"]`);
    const scroller = document.querySelector<HTMLElement>("[data-testid=message-scroller]");
    if (arrow && scroller) {
      arrow.focus({ preventScroll: true });
      keepInPlace(scroller, find, from.top);
    } else if (document.activeElement === document.body && !isHoverless()) {
      // The version shown has no switch there: the message box, not the page.
      focusComposer();
    }
  }, [stayRequest, messages]);
  useFirstMessage(chatId, (text) => {
    lastSent.current = text;
    void sendMessage({ text });
  });
  // The server refused the request before its turn started (its answer is an error body):
  // nothing was stored, so the timeline goes back to what is, and a sent text to the box.
  const refusal = useMemo(() => serverErrorOf(error), [error]);
  // A quota or rate limit is shown in the composer, with when it resets, not as a failed reply.
  const limit = useMemo(() => limitNoticeOf(error), [error]);

  // A refused send's text, back in the message box (unless the server did store it).
  const [returned, setReturned] = useState<{ text: string; at: number } | null>(null);
  const { replying: replyElsewhere, follow: followReplyElsewhere } = useReplyInProgress(
    chatId,
    initialReplying === true,
    useCallback(
      (page: FoldUIMessage[]) => {
        setStoredTail(page);
        // Stored elsewhere, as this page's own replies are: the ring, a first title and the
        // chat's place in the list follow it.
        setUsageVersion((v) => v + 1);
        router.refresh();
      },
      [setStoredTail, router],
    ),
  );
  // This page's own reply stream dropped (the connection went, a phone put the tab to sleep)
  // while the server goes on writing the reply and then stores it. Once online again, the page
  // follows the live reply from its start (/stream), then reads what is stored: the reply shows
  // as the server keeps it, not as an error whose Retry the still busy chat would refuse.
  useEffect(() => {
    afterDisconnect.current = () => {
      void whenOnline().then(async () => {
        await resumeStream();
        followReplyElsewhere();
      });
    };
  }, [resumeStream, followReplyElsewhere]);
  // Stop that the server did not end soon (or could not be asked): the page lets the stream go,
  // and then shows what the server stores. A reply the stream had only begun (nothing in it
  // yet) goes at once: left there empty, it hid the message's Retry; one with text stays until
  // the stored one replaces it (the server may still finish it, or store it Stopped).
  const stopHere = useCallback(() => {
    void stop().then(() => {
      setMessages((list) => {
        const last = list.at(-1);
        return last && isEmptyReply(last) ? list.slice(0, -1) : list;
      });
      followReplyElsewhere();
    });
  }, [stop, setMessages, followReplyElsewhere]);
  const stopReply = useStopReply(
    chatId,
    busy,
    stopHere,
    useCallback(() => {
      // The message the running reply answers (a regenerate's too): its turn may not listen for
      // Stop yet even once its reply shows, and a stop that names it waits for it. A page that
      // follows a reply whose message it does not hold (loaded as the turn began) names none.
      // The attempt is this page's own request (a reply followed since the page loaded has none).
      const messageId = messageBeingAnswered(latestMessages.current);
      return { messageId, attemptId: messageId ? attemptRef.current : undefined };
    }, []),
    useCallback(async (response: Response) => {
      setActionProblem(
        `${await errorText(response, "The reply could not be stopped.")} It may still be written and stored.`,
      );
    }, []),
  );
  useStoredMessagesAfterRefusal(
    chatId,
    refusal,
    useCallback(
      (page: StoredPage | null) => {
        const sent = lastSent.current;
        const sentId = latestMessages.current.findLast((m) => m.role === "user")?.id;
        lastSent.current = "";
        // Stored after all (the answer was lost on the way): it shows, and is not sent twice.
        const stored = page?.messages.some((m) => m.id === sentId) === true;
        if (sent && !stored) setReturned({ text: sent, at: Date.now() });
        const base = beforeRewrite.current;
        beforeRewrite.current = null;
        // A refused edit: its box opens again with the text, unless the server stored it after
        // all (the message holds it now).
        const edit = sentEdit.current;
        sentEdit.current = null;
        const storedEdit = page?.messages.find((m) => m.id === edit?.messageId);
        if (edit && !(storedEdit && messageText(storedEdit) === edit.text)) {
          reopenEdit(editDrafts, edit.messageId, edit.text);
        }
        if (!page) {
          // What is stored cannot be read (an outage), but the refusal stored nothing: the
          // timeline goes back to before the send, its text being back in the box.
          if (base) setMessages(base);
          // Only a message this page just sent (a Retry asks again for one that is stored).
          else if (sent && sentId) {
            setMessages((list) => {
              const at = list.findLastIndex((m) => m.id === sentId);
              return at === -1 ? list : list.slice(0, at);
            });
          }
          return;
        }
        if (base) setMessages(withStoredTail(base, page.messages));
        else setStoredTail(page.messages);
        // Another tab's reply is being written (the chat ends with its message): say so and follow
        // it until it is stored. Anything else holding the chat (another tab's Compact now or
        // summary edit) writes no reply to follow: the refusal stays, saying why.
        if (page.replying && page.messages.at(-1)?.role === "user") {
          clearError();
          followReplyElsewhere();
        }
      },
      [setStoredTail, setMessages, clearError, followReplyElsewhere, editDrafts],
    ),
  );
  const { setContext } = usage;
  // A background compaction that started after the last reply: its trace, live, then kept.
  const liveCompaction = useLiveCompaction(
    chatId,
    usage.context?.compacting === true,
    useCallback(
      (entry: FoldUIMessage | null) => {
        if (entry) {
          setMessages((list) => withCompactionEntry(list, entry, busyRef.current));
        } else {
          // It ended before the page could follow it: its trace is among the stored messages.
          void fetchStoredPage(chatId).then((page) => {
            if (page && !busyRef.current) setStoredTail(page.messages);
          });
        }
        setUsageVersion((v) => v + 1);
      },
      [chatId, setMessages, setStoredTail],
    ),
  );
  const compact = useCompactNow({
    chatId,
    modelId,
    busy,
    context: usage.context,
    onDone: useCallback(
      ({ message, context }: { message: FoldUIMessage | null; context: ChatContext }) => {
        if (message) setMessages((list) => withCompactionEntry(list, message, busyRef.current));
        setContext(context);
        setUsageVersion((v) => v + 1);
      },
      [setMessages, setContext],
    ),
  });
  /**
   * Retry of an unanswered message. The SDK asks again for the last message, dropping whatever
   * follows the user's: a compaction's entry there (a note, a fold) stays stored, and is put
   * back where the server keeps it, before the new reply.
   */
  function retryUnanswered() {
    armFocusRescue();
    lastSent.current = "";
    const list = latestMessages.current;
    const asked = list.findLastIndex((m) => m.role === "user");
    const entries = list.slice(asked + 1).filter(isCompactionEntry);
    // The SDK asks again from the user's message (what came after it was never stored but the
    // entries, which go back once it has answered).
    if (entries.length > 0) setMessages(list.slice(0, asked + 1));
    // Named, so a chat that went on elsewhere since is refused rather than another reply
    // regenerated in its place.
    const messageId = list[asked]?.id;
    void regenerate(messageId ? { messageId } : undefined).then(() => {
      if (entries.length > 0) setMessages((shown) => withEntriesPutBack(shown, entries, list));
    });
  }
  const lastAssistantId = useMemo(() => lastAssistantOf(timeline), [timeline]);
  // A compaction's entry after the last message (a note added, a background fold) is no reply.
  const lastIsUser = timeline.findLast((m) => !isCompactionEntry(m))?.role === "user";

  // Picks are saved one after another, so the server ends on the last one; a pick that fails
  // puts the picker back only when no later pick is on its way, and then to what the chat has.
  // Each pick says when it was made by the server's clock (never twice the same instant), so
  // one that hung and reaches the server after a later one is refused there instead of taking
  // the chat back, and a pick on a device whose clock is behind still counts as the later one.
  const modelSaves = useRef({
    latest: 0,
    saved: initialModelId,
    queue: Promise.resolve(),
    pickedAt: 0,
  });
  async function changeModel(next: string) {
    const saves = modelSaves.current;
    const pick = ++saves.latest;
    const pickedAt = Math.max(serverClock.now(), saves.pickedAt + 1);
    saves.pickedAt = pickedAt;
    setPickedModelId(next);
    const save = saves.queue.then(() =>
      apiFetch(`/api/chats/${chatId}`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ modelId: next, pickedAt }),
        // One that hangs fails (as unreachable) rather than holding every later pick.
        signal: AbortSignal.timeout(MODEL_SAVE_TIMEOUT_MS),
      }),
    );
    saves.queue = save.then(
      () => undefined,
      () => undefined,
    );
    const response = await save;
    if (response.ok) {
      saves.saved = next;
      setSavedModelId(next);
    }
    if (pick !== saves.latest) return;
    // Saved: a problem shown before (this change's last try, say) is over.
    if (response.ok) {
      setActionProblem(null);
      return;
    }
    // Not saved by this request: what the chat has now (a turn sent with the pick meanwhile
    // keeps it on the chat; a save that timed out may have landed after all).
    const stored = await storedModelOf(chatId);
    if (pick !== saves.latest) return;
    if (stored !== undefined) {
      saves.saved = stored;
      setSavedModelId(stored);
    }
    if (stored === next) {
      setActionProblem(null);
      return;
    }
    setPickedModelId(saves.saved);
    setActionProblem(await errorText(response, "The chat's model could not be changed."));
  }

  // The ring and Memory do not wait for the model list: the chat's model and its summary are
  // the chat's own, and a list that failed to load leaves them as useful as ever.
  const toolbar = (
    <>
      {models.status === "ready" ? (
        <ModelPicker
          models={models.models}
          value={modelId}
          onChange={changeModel}
          disabled={busy}
        />
      ) : (
        <span className="text-xs text-muted">
          {models.status === "loading" ? "Loading models…" : models.message}
        </span>
      )}
      <ContextRing
        context={usage.context}
        error={usage.error ?? (modelId || models.status !== "error" ? null : models.message)}
        onClick={compact.request}
        covered={compact.state === "confirm"}
        busyLabel={
          compact.state === "queued"
            ? "queued"
            : compact.state === "running" || liveCompaction
              ? "compacting…"
              : undefined
        }
      />
      {compact.state === "running" ? (
        <button
          type="button"
          onClick={() => void compact.stop()}
          className="rounded-full border border-line px-2 py-0.5 text-xs font-medium text-zinc-700 hover:bg-zinc-100"
        >
          Stop compacting
        </button>
      ) : null}
      <MemoryPanel
        chatId={chatId}
        memory={remembered.memory}
        readProblem={remembered.readProblem}
        onRetryRead={remembered.retryRead}
        busy={busy}
        onSaved={(memory, entry) => {
          remembered.setMemory(memory);
          setMessages((list) => withCompactionEntry(list, entry, busyRef.current));
          setUsageVersion((v) => v + 1);
        }}
        onStale={() => setUsageVersion((v) => v + 1)}
        onUnpinAll={async () => {
          let problem: string | null = null;
          for (const id of remembered.memory?.pinnedIds ?? []) {
            problem = (await pinOne(id, false)) ?? problem;
          }
          return problem;
        }}
        onUnpin={(id) => pinOne(id, false)}
      />
    </>
  );

  // What became of the chat's last message — a failure with its Retry, "No reply", or "A reply
  // is being written" — goes just under it, not at the end of the timeline, where a note or fold
  // added after it would seem to own it.
  const failed = error && !limit ? error : null;
  const lastShownId = timeline.findLast((m) => !isCompactionEntry(m))?.id;
  const outcomeId = failed ? lastShownId : !busy && lastIsUser ? lastShownId : undefined;
  const failure = failed ? (
    <div
      role="alert"
      className="flex items-start gap-3 rounded-xl border border-red-200 bg-red-50 px-4 py-3 text-sm text-red-800"
    >
      <AlertCircle size={16} className="mt-0.5 shrink-0" />
      <p className="flex-1">{readableError(failed)}</p>
      {/no longer fits/.test(failed.message) ? (
        <button
          type="button"
          onClick={() => {
            clearError();
            compact.request();
          }}
          className="inline-flex items-center gap-1 font-medium hover:underline"
        >
          Compact now
        </button>
      ) : null}
      {refusal ? null : (
        // A refused request stored nothing: Retry would answer an older message instead.
        <button
          type="button"
          // Not while a version switch is on its way: it may show another version.
          disabled={switchPending}
          onClick={() => {
            clearError();
            retryUnanswered();
          }}
          className="inline-flex items-center gap-1 font-medium hover:underline disabled:opacity-50"
        >
          <RotateCcw size={14} /> Retry
        </button>
      )}
    </div>
  ) : null;
  const outcomeRow =
    failure ??
    (replyElsewhere ? (
      <p className="animate-pulse text-sm text-muted" aria-live="polite">
        A reply is being written… it appears here when it is done.
      </p>
    ) : (
      <div className="flex items-center gap-3 text-sm text-muted">
        <span>No reply.</span>
        <button
          type="button"
          disabled={switchPending}
          onClick={retryUnanswered}
          className="inline-flex items-center gap-1 font-medium text-ink hover:underline disabled:opacity-50"
        >
          <RotateCcw size={14} /> Retry
        </button>
      </div>
    ));

  const footer = (
    <div className="space-y-6">
      {liveCompaction ? (
        <div aria-live="polite">
          <MessageView
            message={liveCompaction}
            streaming
            isLastAssistant={false}
            busy={busy}
            onRegenerate={() => undefined}
            onEdit={async () => false}
            onContinue={() => undefined}
          />
        </div>
      ) : null}
      {compact.state === "running" && !liveCompaction ? (
        // Compact now answers once it is done: its trace runs here meanwhile, as a turn's does.
        <RunningTrace />
      ) : null}
      {stillThinking ? <Thinking /> : null}
      {/* A request refused before the chat had a message to show it under. */}
      {failure && outcomeId === undefined ? failure : null}
    </div>
  );

  return (
    <ModelLabelsProvider models={models.status === "ready" ? models.models : NO_MODELS}>
      <MessageList
        messages={timeline}
        hasOlder={history.hasMore}
        loadingOlder={history.loading}
        onLoadOlder={() => void history.loadOlder(timeline[0]?.id)}
        followRequest={followRequest}
        stayRequest={stayRequest}
        editDrafts={editDrafts}
        footer={footer}
        empty={
          <div className="py-24 text-center">
            <p className="text-base font-medium">What's on your mind?</p>
            <p className="mt-1 text-sm text-muted">
              {continued
                ? CONTINUED_TEXT
                : "Ask anything. Long chats are fine: Fold folds old turns into a summary."}
            </p>
          </div>
        }
        // A continued chat whose pinned messages came along: it says where it starts from.
        header={
          continued && !remembered.memory?.watermark ? (
            <p className="pb-6 text-center text-sm text-muted">{CONTINUED_TEXT}</p>
          ) : null
        }
        // Everything a row draws besides its message: see MessageList's renderMessage.
        renderVersion={`${status}|${busy}|${switchPending}|${lastAssistantId}|${timeline.length}|${watermarkIndex}|${outcomeId}|${replyElsewhere}|${failed?.message}|${JSON.stringify(remembered.branches)}`}
        renderMessage={(message, index) => (
          <div className="group/message space-y-1">
            <MessageView
              message={message}
              streaming={status === "streaming" && index === timeline.length - 1}
              isLastAssistant={message.id === lastAssistantId}
              busy={busy || switchPending}
              onRegenerate={() =>
                void safeEdit.request(
                  { kind: "regenerate", messageId: message.id },
                  laterShown(timeline, index),
                )
              }
              onEdit={(text) =>
                safeEdit.request(
                  { kind: "edit", messageId: message.id, text },
                  laterShown(timeline, index),
                )
              }
              onContinue={() => {
                lastSent.current = "";
                armFocusRescue();
                void sendMessage({ text: CONTINUE_TEXT });
              }}
              memory={
                isCompactionEntry(message) ? null : (
                  <MessageMemoryBar
                    role={message.role}
                    folded={index <= watermarkIndex && message.metadata?.pinned !== true}
                    pinned={isPinnedByUser(message.metadata)}
                    branch={branchOn(remembered.branches, message.id)}
                    busy={busy || switchPending}
                    onPin={(pinned) => void pinMessage(message.id, pinned)}
                    onSwitch={(position, arrow) => {
                      const branch = branchOn(remembered.branches, message.id);
                      if (!branch) return;
                      switchBranch(branch.messageId, position, arrow);
                    }}
                  />
                )
              }
            />
            {message.id === outcomeId ? <div className="pt-4">{outcomeRow}</div> : null}
          </div>
        )}
      />
      <EditConfirm
        pending={safeEdit.pending}
        onConfirm={safeEdit.confirm}
        onCancel={safeEdit.cancel}
      />
      {actionProblem ? (
        <div
          role="alert"
          className="mx-auto mb-2 flex w-full max-w-3xl items-center justify-between gap-2 rounded-lg bg-red-50 px-3 py-2 text-xs text-red-700"
        >
          <span>{actionProblem}</span>
          <button type="button" onClick={() => setActionProblem(null)} className="font-medium">
            Dismiss
          </button>
        </div>
      ) : null}
      <CompactConfirm
        open={compact.state === "confirm"}
        context={usage.context}
        onConfirm={() => void compact.confirm()}
        onCancel={compact.cancel}
      />
      {compact.error ? (
        <div
          role="alert"
          className="mx-auto mb-2 flex w-full max-w-3xl items-center justify-between gap-2 rounded-lg bg-red-50 px-3 py-2 text-xs text-red-700"
        >
          <span>{compact.error}</span>
          <button type="button" onClick={compact.dismissError} className="font-medium">
            Dismiss
          </button>
        </div>
      ) : null}
      <Composer
        onSend={(text) => {
          lastSent.current = text;
          setFollowRequest((n) => n + 1);
          const unsaved = unsavedReply.current;
          unsavedReply.current = null;
          // Wherever it stands: a note or a fold may have come after it.
          if (unsaved) setMessages(messages.filter((m) => m.id !== unsaved));
          void sendMessage({ text });
        }}
        onStop={stopReply}
        busy={busy}
        held={
          switchPending
            ? "Switching version… You can send once it is done."
            : // Compact now holds the chat as a turn would: a message sent meanwhile is refused.
              compact.state === "running"
              ? "Compacting… You can send once it is done."
              : null
        }
        disabled={!modelId}
        notice={limit}
        returned={returned}
        draftKey={chatId}
        toolbar={toolbar}
        maxChars={MESSAGE_MAX_CHARS}
      />
    </ModelLabelsProvider>
  );
}

const CONTINUED_TEXT =
  "This chat continues an earlier one: the model starts from its summary (open Memory to read it).";

/** Resolves once the browser says it is online (at once when it is). */
function whenOnline(): Promise<void> {
  if (navigator.onLine) return Promise.resolve();
  return new Promise((resolve) => {
    window.addEventListener("online", () => resolve(), { once: true });
  });
}

/** Messages after the one at `index` (a compaction entry in the timeline is not one). */
function laterShown(timeline: FoldUIMessage[], index: number): number {
  return timeline.slice(index + 1).filter((m) => !isCompactionEntry(m)).length;
}

/** The ‹ n/m › switch that sits under this message, if any. */
function branchOn(branches: BranchSwitch[], messageId: string): BranchSwitch | undefined {
  return branches.find((b) => b.shownOn === messageId);
}

/** The last reply: not a compaction's entry (a note, a fold), which has no Retry or Continue. */
function lastAssistantOf(messages: FoldUIMessage[]): string | undefined {
  return messages.findLast((m) => m.role === "assistant" && !isCompactionEntry(m))?.id;
}

/** The model the chat has stored (null: the default), or undefined when it cannot be read. */
async function storedModelOf(chatId: string): Promise<string | null | undefined> {
  const response = await apiFetch(`/api/chats/${chatId}?limit=1`, { cache: "no-store" });
  if (!response.ok) return undefined;
  const body = (await response.json().catch(() => null)) as {
    chat?: { modelId: string | null };
  } | null;
  return body?.chat ? body.chat.modelId : undefined;
}
