import { beforeEach, describe, expect, it, vi } from "vitest";

// Just enough of React's hooks to run useOlderMessages outside a page: state in slots, in call
// order, and each update runs the hook again.
const slots: unknown[] = [];
let cursor = 0;
let rerender: () => void = () => {};
vi.mock("react", () => ({
  useState: (init: unknown) => {
    const i = cursor++;
    if (!(i in slots)) slots[i] = typeof init === "function" ? (init as () => unknown)() : init;
    const set = (next: unknown) => {
      slots[i] = typeof next === "function" ? (next as (v: unknown) => unknown)(slots[i]) : next;
      rerender();
    };
    return [slots[i], set];
  },
  useRef: (init: unknown) => {
    const i = cursor++;
    if (!(i in slots)) slots[i] = { current: init };
    return slots[i];
  },
  useCallback: (fn: unknown) => {
    cursor++;
    return fn;
  },
}));

// The older page's request, answered when the test says.
const answers: Array<(response: Response) => void> = [];
vi.mock("@/components/outage/api-fetch", () => ({
  apiFetch: () => new Promise<Response>((resolve) => answers.push(resolve)),
}));
vi.mock("@/components/ui/toast", () => ({ toast: { error: () => undefined } }));

const { useOlderMessages } = await import("@/components/chat/use-older-messages");

const row = (n: number) => ({
  id: `m${n}`,
  role: "user",
  parts: [{ type: "text", text: `m${n}` }],
  metadata: null,
  createdAt: new Date(0).toISOString(),
});

describe("older messages across a version switch", () => {
  beforeEach(() => {
    slots.length = 0;
    answers.length = 0;
  });

  it("a page asked for before the switch is not put in front of the version it shows", async () => {
    let hook!: ReturnType<typeof useOlderMessages>;
    rerender = () => {
      cursor = 0;
      hook = useOlderMessages("chat-1", true);
    };
    rerender();
    // A 120-message chat showing m71…m120: the user asked for another version of m110, and
    // scrolled up while the switch was on its way.
    const load = hook.loadOlder("m71");
    // The switch lands first: the newest page of the new version is shown (m61…m109, m110′…).
    hook.restart(true);
    // Then the page before m71 of the old version arrives.
    answers[0]?.(
      Response.json({ messages: Array.from({ length: 70 }, (_, i) => row(i + 1)), hasMore: false }),
    );
    await load;
    expect(hook.older).toEqual([]);
    // Its "no more" was of the old version's page: the new one still has older messages.
    expect(hook.hasMore).toBe(true);
  });

  it("a page asked for without a switch comes in front", async () => {
    let hook!: ReturnType<typeof useOlderMessages>;
    rerender = () => {
      cursor = 0;
      hook = useOlderMessages("chat-1", true);
    };
    rerender();
    const load = hook.loadOlder("m71");
    answers[0]?.(Response.json({ messages: [row(69), row(70)], hasMore: false }));
    await load;
    expect(hook.older.map((m) => m.id)).toEqual(["m69", "m70"]);
    expect(hook.hasMore).toBe(false);
  });
});
