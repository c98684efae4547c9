import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { MessageView } from "@/components/chat/message-view";
import type { FoldUIMessage } from "@/lib/message/ui-message";

/** A 1×1 PNG. */
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

const shown = (parts: unknown[]) =>
  renderToStaticMarkup(
    createElement(MessageView, {
      message: { id: "a1", role: "assistant", parts } as FoldUIMessage,
      streaming: false,
      isLastAssistant: true,
      busy: false,
      onRegenerate: () => undefined,
      onEdit: async () => false,
      onContinue: () => undefined,
    }),
  );

describe("a file a model made, in its reply", () => {
  it("shows an image beside the reply's words", () => {
    const html = shown([
      { type: "step-start" },
      { type: "text", text: "Here is your lighthouse:" },
      { type: "file", mediaType: "image/png", url: `data:image/png;base64,${PNG}` },
    ]);
    expect(html).toContain("Here is your lighthouse:");
    expect(html).toMatch(/<img[^>]+src="data:image\/png;base64,/);
    expect(html).toMatch(/<img[^>]+alt="Generated image"/);
  });

  it("offers another kind of file for download under its name", () => {
    const html = shown([
      {
        type: "file",
        mediaType: "application/pdf",
        url: "data:application/pdf;base64,JVBERi0=",
        filename: "report.pdf",
      },
    ]);
    expect(html).toMatch(
      /<a[^>]+href="data:application\/pdf;base64,JVBERi0="[^>]+download="report.pdf"/,
    );
  });

  it("loads nothing from elsewhere: a file behind a link is named, not fetched", () => {
    const html = shown([
      { type: "file", mediaType: "image/png", url: "https://files.example.com/cat.png" },
    ]);
    expect(html).not.toContain("files.example.com");
    expect(html).toContain("Generated image");
  });
});
