"use client";

import { useVirtualizer } from "@tanstack/react-virtual";
import { ArrowDown } from "lucide-react";
import {
  memo,
  type ReactNode,
  type UIEvent,
  useCallback,
  useEffect,
  useLayoutEffect,
  useRef,
} from "react";
import { useStickToBottom } from "use-stick-to-bottom";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { estimateMessageHeight } from "./estimate-height";
import { type EditDrafts, EditDraftsProvider } from "./message/edit-drafts";

/** Before the scroller is laid out: the widest column, and a row of unknown content. */
const DEFAULT_WIDTH_PX = 800;
const DEFAULT_ROW_PX = 120;
/** Messages rendered beyond the visible ones, so a quick scroll never shows a gap. */
const OVERSCAN = 6;
/** Scrolling up to within this distance of the top asks for older messages. */
const NEAR_TOP_PX = 600;

type RenderMessage = (message: FoldUIMessage, index: number) => ReactNode;

type Props = {
  messages: FoldUIMessage[];
  /**
   * Draws one message. Rows are memoized: a row re-renders only when its message object, its
   * index or `renderVersion` changes, so scrolling and streaming never redraw settled messages.
   * Anything else the drawing depends on must be folded into `renderVersion`.
   */
  renderMessage: RenderMessage;
  renderVersion: string;
  /** Under the last message: "Thinking…", an error, a retry. */
  footer?: ReactNode;
  /** Shown above the first message once the chat's start is loaded. */
  header?: ReactNode;
  /** Shown instead of the list when there are no messages. */
  empty?: ReactNode;
  /** Older messages exist on the server; `onLoadOlder` fetches the next page of them. */
  hasOlder: boolean;
  loadingOlder: boolean;
  onLoadOlder: () => void;
  /** Changes whenever the view must jump to the latest message (the user just sent one). */
  followRequest?: number;
  /**
   * Changes whenever the view must stop following the latest message as the messages change
   * (a version switch draws them anew: the view stays with the switch, not the chat's end).
   */
  stayRequest?: number;
  /** The page's open edits, when it reopens a refused one (edit-drafts.tsx). */
  editDrafts?: EditDrafts;
};

/**
 * The chat's timeline. Only the messages on screen are in the DOM (TanStack Virtual, measured
 * as they render), so a chat of thousands of messages opens and scrolls like a short one. The
 * view follows new output while it is at the bottom and stays put once the user scrolls up
 * (use-stick-to-bottom); older pages prepended at the top keep the message being read where it
 * is (the virtualizer's end anchoring). An edit box open in a row that leaves the DOM keeps its
 * text (edit-drafts.tsx).
 */
export function MessageList({
  messages,
  renderMessage,
  renderVersion,
  footer,
  header,
  empty,
  hasOlder,
  loadingOlder,
  onLoadOlder,
  followRequest,
  stayRequest,
  editDrafts,
}: Props) {
  const stick = useStickToBottom({ initial: "instant", resize: "instant" });
  const listRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: messages.length,
    getScrollElement: () => stick.scrollRef.current,
    // A guess from the message's text until the row is measured (estimate-height.ts).
    estimateSize: (index) => {
      const message = messages[index];
      const width = stick.scrollRef.current?.clientWidth ?? DEFAULT_WIDTH_PX;
      return message ? estimateMessageHeight(message, width) : DEFAULT_ROW_PX;
    },
    getItemKey: (index) => messages[index]?.id ?? index,
    anchorTo: "end",
    overscan: OVERSCAN,
    scrollMargin: listRef.current?.offsetTop ?? 0,
    useFlushSync: false,
  });

  const { scrollToBottom } = stick;
  const scrollToLatest = useCallback(() => {
    void scrollToBottom("instant");
  }, [scrollToBottom]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: jump on each new request
  useEffect(() => {
    if (followRequest) scrollToLatest();
  }, [followRequest]);

  // In the commit that draws the new messages, before their size reaches the follower.
  const { stopScroll } = stick;
  // biome-ignore lint/correctness/useExhaustiveDependencies: stops on each new request
  useLayoutEffect(() => {
    if (stayRequest) stopScroll();
  }, [stayRequest]);

  const lastTop = useRef(0);
  const onScroll = useCallback(
    (event: UIEvent<HTMLDivElement>) => {
      const top = event.currentTarget.scrollTop;
      const goingUp = top < lastTop.current;
      lastTop.current = top;
      if (goingUp && top < NEAR_TOP_PX && hasOlder && !loadingOlder) onLoadOlder();
    },
    [hasOlder, loadingOlder, onLoadOlder],
  );

  // The last page of older messages takes "Load older messages" away; when it held the
  // keyboard's focus, the focus goes to the messages (arrow keys scroll them), not the page.
  const olderButton = useRef<HTMLButtonElement>(null);
  const olderHadFocus = useRef(false);
  // Read as the load starts, however it started (the button, or scrolling near the top as
  // focusing the button does).
  useEffect(() => {
    if (loadingOlder) olderHadFocus.current = document.activeElement === olderButton.current;
  }, [loadingOlder]);
  useEffect(() => {
    if (hasOlder || !olderHadFocus.current) return;
    olderHadFocus.current = false;
    if (document.activeElement === document.body) stick.scrollRef.current?.focus();
  }, [hasOlder, stick.scrollRef]);

  const items = virtualizer.getVirtualItems();
  const margin = virtualizer.options.scrollMargin;
  return (
    <div
      ref={stick.scrollRef}
      onScroll={onScroll}
      data-testid="message-scroller"
      tabIndex={-1}
      role="region"
      aria-label="Messages"
      className="relative min-h-0 flex-1 overflow-x-hidden overflow-y-auto outline-none"
    >
      <div ref={stick.contentRef} className="mx-auto w-full max-w-3xl px-4 py-6">
        <EditDraftsProvider store={editDrafts}>
          {hasOlder ? (
            <div className="flex justify-center pb-4">
              {/* aria-disabled, not disabled: a disabled button drops the keyboard's focus. */}
              <button
                type="button"
                ref={olderButton}
                onClick={() => {
                  if (!loadingOlder) onLoadOlder();
                }}
                aria-disabled={loadingOlder}
                aria-busy={loadingOlder}
                className="rounded-full border border-line px-3 py-1 text-xs text-muted hover:bg-zinc-100 aria-disabled:cursor-wait"
              >
                {loadingOlder ? "Loading older messages…" : "Load older messages"}
              </button>
            </div>
          ) : null}
          {messages.length === 0 ? empty : hasOlder ? null : header}
          <div
            ref={listRef}
            className="relative w-full"
            style={{ height: virtualizer.getTotalSize() }}
          >
            {items.map((item) => {
              const message = messages[item.index];
              if (!message) return null;
              return (
                <div
                  key={item.key}
                  ref={virtualizer.measureElement}
                  data-index={item.index}
                  data-message-id={message.id}
                  className="absolute top-0 left-0 w-full pb-6"
                  style={{ transform: `translateY(${item.start - margin}px)` }}
                >
                  <Row
                    message={message}
                    index={item.index}
                    version={renderVersion}
                    render={renderMessage}
                  />
                </div>
              );
            })}
          </div>
        </EditDraftsProvider>
        {footer}
      </div>
      {!stick.isAtBottom ? (
        <button
          type="button"
          onClick={scrollToLatest}
          aria-label="Scroll to the latest message"
          className="sticky bottom-3 left-1/2 mx-auto flex -translate-x-1/2 items-center rounded-full border border-line bg-white p-2 shadow"
        >
          <ArrowDown size={16} />
        </button>
      ) : null}
    </div>
  );
}

type RowProps = { message: FoldUIMessage; index: number; version: string; render: RenderMessage };

/** `render` is a new function on every parent render; what it draws is keyed by the rest. */
const Row = memo(
  function Row({ message, index, render }: RowProps) {
    return render(message, index);
  },
  (before, after) =>
    before.message === after.message &&
    before.index === after.index &&
    before.version === after.version,
);
