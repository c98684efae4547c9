import { describe, expect, it } from "vitest";
import { estimateMessageHeight } from "@/components/chat/estimate-height";
import type { FoldUIMessage } from "@/lib/message/ui-message";

const line = "Message 9993: the budget, the window and the summary keep the turn small.";

function message(role: "user" | "assistant", text: string): FoldUIMessage {
  return { id: crypto.randomUUID(), role, parts: [{ type: "text", text }] };
}

/**
 * Row heights Chromium laid out for these messages in the timeline's 768 px column (the ui
 * benchmark's chat, 1440 px window). A change to the timeline's styles that moves them
 * should move the estimator's constants with it.
 */
const MEASURED: Array<[FoldUIMessage, number]> = [
  [message("user", line), 86],
  [message("assistant", `${line} ${line}`), 104],
  [message("assistant", `${line}\n\n\`\`\`ts\nconst turn = 9993;\nfold(turn);\n\`\`\``), 229],
  [message("assistant", `${line}\n\n- first point\n- second point\n- third point`), 189],
];

describe("estimateMessageHeight: a row's height before it is measured", () => {
  it("is within a tenth of the height Chromium gives the timeline's message shapes", () => {
    for (const [shown, height] of MEASURED) {
      const estimate = estimateMessageHeight(shown, 1152);
      expect(Math.abs(estimate - height) / height).toBeLessThan(0.1);
    }
  });

  it("grows with code lines and with wrapping in a narrow column", () => {
    const short = message("assistant", "```ts\nconst a = 1;\n```");
    const long = message("assistant", "```ts\nconst a = 1;\nconst b = 2;\nconst c = 3;\n```");
    expect(estimateMessageHeight(long, 1152)).toBeGreaterThan(estimateMessageHeight(short, 1152));
    const prose = message("user", line.repeat(4));
    expect(estimateMessageHeight(prose, 390)).toBeGreaterThan(estimateMessageHeight(prose, 1152));
  });

  it("falls back to a fixed guess for a message without text", () => {
    const empty: FoldUIMessage = { id: "x", role: "assistant", parts: [] };
    expect(estimateMessageHeight(empty, 1152)).toBe(120);
  });
});
