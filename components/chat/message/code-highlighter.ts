import type { CodeHighlighterPlugin, HighlightOptions, ThemeInput } from "streamdown";

/** Light and dark: Streamdown styles each token for both and `.dark` picks one. */
const LIGHT = "github-light";
const DARK = "github-dark";
const THEMES: [ThemeInput, ThemeInput] = [LIGHT, DARK];

/** Longest wait for an idle moment before Shiki loads anyway. */
const IDLE_TIMEOUT_MS = 1_500;

let plugin: CodeHighlighterPlugin | undefined;
let loading: Promise<CodeHighlighterPlugin> | undefined;

/**
 * Shiki (through @streamdown/code) comes from the app's own bundle, in a chunk of its own, the
 * first time a reply shows a code block; each grammar and theme is a further chunk it imports on
 * demand, and its regex engine is plain JavaScript (no WASM). So a chat without code never loads
 * it, and nothing is fetched from outside the app (the page's CSP would refuse it anyway). It
 * waits for an idle moment, so opening a chat is not slowed by compiling grammars.
 */
function load(): Promise<CodeHighlighterPlugin> {
  loading ??= whenIdle()
    .then(() => import("@streamdown/code"))
    .then(({ createCodePlugin }) => {
      plugin = createCodePlugin({ themes: [LIGHT, DARK] }) as CodeHighlighterPlugin;
      return plugin;
    });
  return loading;
}

function whenIdle(): Promise<void> {
  return new Promise((resolve) => {
    if (typeof requestIdleCallback === "function") {
      requestIdleCallback(() => resolve(), { timeout: IDLE_TIMEOUT_MS });
    } else setTimeout(resolve, 0);
  });
}

/**
 * The code plugin Streamdown is given (`plugins={{ code }}`). Until Shiki has loaded, a block
 * shows as plain text and is highlighted by the callback; after that, cached blocks come back
 * at once.
 */
export const code: CodeHighlighterPlugin = {
  name: "shiki",
  type: "code-highlighter",
  getThemes: () => THEMES,
  getSupportedLanguages: () => plugin?.getSupportedLanguages() ?? [],
  // Before Shiki has loaded every language is worth a try: an unknown one falls back to text.
  supportsLanguage: (language) => plugin?.supportsLanguage(language) ?? true,
  highlight(options: HighlightOptions, callback) {
    if (plugin) return plugin.highlight(options, callback);
    load()
      .then((loaded) => {
        const result = loaded.highlight(options, callback);
        if (result) callback?.(result);
      })
      .catch((error: unknown) => console.error("Could not load the code highlighter", error));
    return null;
  },
};
