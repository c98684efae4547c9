import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { MessageView } from "@/components/chat/message-view";
import type { FoldUIMessage } from "@/lib/message/ui-message";

function shown(metadata: FoldUIMessage["metadata"]): string {
  const message: FoldUIMessage = { id: "a1", role: "assistant", parts: [], metadata };
  return renderToStaticMarkup(
    createElement(MessageView, {
      message,
      streaming: false,
      isLastAssistant: true,
      busy: false,
      onRegenerate: () => undefined,
      onEdit: async () => false,
      onContinue: () => undefined,
    }),
  );
}

describe("a stopped reply's notice", () => {
  it("says why when Fold stopped it because today's token quota ran out", () => {
    const html = shown({ stopped: true, stoppedFor: "token_quota" });
    expect(html).toContain("Stopped");
    expect(html).toContain("Today&#x27;s token quota ran out during this reply.");
  });

  it("says why when Fold stopped it because today's token quota could not be checked", () => {
    const html = shown({ stopped: true, stoppedFor: "quota_unchecked" });
    expect(html).toContain("could not check today&#x27;s token quota");
    expect(html).not.toContain("ran out");
  });

  it("says nothing more when the user stopped it", () => {
    const html = shown({ stopped: true });
    expect(html).toContain("Stopped");
    expect(html).not.toContain("quota");
  });
});
