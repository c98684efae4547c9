import { type ChildProcess, spawn, spawnSync } from "node:child_process";
// @ts-expect-error -- a plain .mjs script shared with `npm start` and the e2e runner
import { nextStartArgs } from "../../scripts/server-runtime.mjs";
import { browserCookies } from "../helpers/account";
import type { Benchmark } from "./benchmark";
import { percentile } from "./measure";

/**
 * `ui`: a 10,000-message chat in Chromium. The chat is stored through Fold's own query
 * functions in a fresh Postgres database, served by `next start` (the production build), and
 * opened in Debian's Chromium through playwright-core with a session made by Fold's own sign-up
 * route. Figures:
 * - `ui.open_10k_ms`: navigation until the chat's last stored message is inside the viewport
 *   (median of several opens; targets ≤ 1,500 ms);
 * - `ui.dom_nodes_10k`: elements in the document once it is open (≤ 3,000);
 * - `ui.scroll_fps_10k`: frames the page paints per second while it scrolls up through the
 *   chat, counted with requestAnimationFrame (≥ 50).
 */

const MESSAGES = 10_000;
const OPENS = 5;
const SCROLL_MS = 5_000;
/** How far each frame scrolls: a brisk flick upwards, through many pages of history. */
const SCROLL_PX_PER_FRAME = 120;
const PORT = Number(process.env.BENCH_UI_PORT ?? 3690);
const SERVER_START_TIMEOUT_MS = 60_000;
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const AUTH_SECRET = "bench-secret-bench-secret-bench-secret-0123";
const ORIGIN = `http://127.0.0.1:${PORT}`;

/** A varied message, so heights differ as in a real chat: prose, lists, code. */
function messageText(seq: number): string {
  const line = `Message ${seq}: the budget, the window and the summary keep the turn small.`;
  if (seq % 10 === 3) return `${line}\n\n\`\`\`ts\nconst turn = ${seq};\nfold(turn);\n\`\`\``;
  if (seq % 10 === 7) return `${line}\n\n- first point\n- second point\n- third point`;
  return seq % 2 === 0 ? line : `${line} ${line}`;
}

/**
 * Runs in the page: scrolls the timeline up by SCROLL_PX_PER_FRAME every animation frame for
 * SCROLL_MS and resolves with the frames per second the page kept up.
 */
const SCROLL_SCRIPT = `new Promise((resolve, reject) => {
  const scroller = document.querySelector("[data-testid=message-scroller]");
  if (!scroller) return reject(new Error("no message scroller"));
  let frames = 0;
  const start = performance.now();
  const tick = (now) => {
    frames++;
    scroller.scrollTop = Math.max(0, scroller.scrollTop - ${SCROLL_PX_PER_FRAME});
    if (now - start < ${SCROLL_MS}) requestAnimationFrame(tick);
    else resolve((frames * 1000) / (now - start));
  };
  requestAnimationFrame(tick);
})`;

async function waitForHealth(url: string, server: ChildProcess): Promise<void> {
  const deadline = Date.now() + SERVER_START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`next start exited with ${server.exitCode}`);
    try {
      if ((await fetch(`${url}/api/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`next start did not answer /api/health within ${SERVER_START_TIMEOUT_MS} ms`);
}

export const benchmark: Benchmark = {
  name: "ui",
  async run(context) {
    process.env.LOG_LEVEL = "silent";
    process.env.BETTER_AUTH_SECRET = AUTH_SECRET;
    process.env.DEMO_MODEL = "always";
    const { openBenchDatabase } = await import("./database");
    const { register } = await import("../helpers/auth");
    const { createChat } = await import("@/lib/db/queries/chats");
    const { appendMessage } = await import("@/lib/db/queries/messages");
    const { chromium } = await import("playwright-core");

    // The production build the e2e suite uses, rebuilt when a source is newer than it.
    const build = spawnSync(process.execPath, ["scripts/build-if-needed.mjs"], {
      stdio: "inherit",
    });
    if (build.status !== 0) throw new Error("next build failed");
    const bench = await openBenchDatabase();
    let server: ChildProcess | undefined;
    let browser: Awaited<ReturnType<typeof chromium.launch>> | undefined;
    try {
      if (!bench.url) throw new Error(`the ui benchmark needs Postgres (${bench.label})`);
      const signUp = await register(bench.database, "ui-bench@example.com");
      const session = signUp.browser;
      const userId = ((await signUp.response.json()) as { user?: { id?: string } }).user?.id;
      if (!userId) throw new Error(`sign-up failed with status ${signUp.response.status}`);
      const chat = await createChat(bench.database.db, { userId, title: "Ten thousand" });
      const seedStart = performance.now();
      let lastId = "";
      for (let seq = 0; seq < MESSAGES; seq++) {
        lastId = `bench-${seq}`;
        await appendMessage(bench.database.db, chat.id, {
          id: lastId,
          role: seq % 2 === 0 ? "user" : "assistant",
          parts: [{ type: "text", text: messageText(seq) }],
          metadata: null,
        });
      }
      const seedMs = Math.round(performance.now() - seedStart);

      server = spawn("npx", ["next", ...nextStartArgs(PORT, "127.0.0.1")], {
        stdio: ["ignore", "ignore", "inherit"],
        env: {
          ...process.env,
          NEXT_TELEMETRY_DISABLED: "1",
          DATABASE_URL: bench.url,
          BETTER_AUTH_URL: ORIGIN,
          REGISTRATION: "open",
        },
        detached: true,
      });
      await waitForHealth(ORIGIN, server);

      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          "--no-sandbox",
          "--disable-gpu",
          "--no-first-run",
          "--disable-background-networking",
        ],
      });
      const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
      await page.context().addCookies(browserCookies(session.cookie, ORIGIN));

      const last = page.locator(`[data-message-id="${lastId}"]`);
      const opens: number[] = [];
      const firstBytes: number[] = [];
      const domReady: number[] = [];
      for (let i = 0; i <= OPENS; i++) {
        const start = performance.now();
        await page.goto(`${ORIGIN}/chat/${chat.id}`);
        await last.waitFor({ state: "visible" });
        await page.waitForFunction(
          `(() => {
            const box = document.querySelector('[data-message-id="${lastId}"]')?.getBoundingClientRect();
            return box !== undefined && box.bottom > 0 && box.top < window.innerHeight;
          })()`,
        );
        if (i === 0) continue;
        opens.push(performance.now() - start);
        const [firstByte, contentLoaded] = (await page.evaluate(
          `(() => { const n = performance.getEntriesByType("navigation")[0]; return [n.responseStart, n.domContentLoadedEventEnd]; })()`,
        )) as [number, number];
        firstBytes.push(firstByte);
        domReady.push(contentLoaded);
      }
      context.note(
        "ui.open_10k_ms",
        `median of ${OPENS} opens after a warm-up (first byte ${Math.round(percentile(firstBytes, 50))} ms, DOM ready ${Math.round(percentile(domReady, 50))} ms); ${MESSAGES.toLocaleString("en-US")} messages stored with appendMessage in ${seedMs} ms (${bench.label})`,
      );
      const domNodes = (await page.evaluate(`document.getElementsByTagName("*").length`)) as number;

      // A string, not a function: the bench runs under tsx, whose helpers the page lacks.
      const fps = (await page.evaluate(SCROLL_SCRIPT)) as number;
      const reached = (await page.evaluate(
        `document.querySelector("[data-message-id]")?.getAttribute("data-message-id") ?? ""`,
      )) as string;
      context.note(
        "ui.scroll_fps_10k",
        `${SCROLL_MS / 1000} s scrolling up ${SCROLL_PX_PER_FRAME} px a frame; reached ${reached}`,
      );
      return {
        "ui.open_10k_ms": Math.round(percentile(opens, 50)),
        "ui.dom_nodes_10k": domNodes,
        "ui.scroll_fps_10k": Math.round(fps * 10) / 10,
      };
    } finally {
      await browser?.close();
      if (server?.pid) process.kill(-server.pid, "SIGTERM");
      await bench.dispose();
    }
  },
};
