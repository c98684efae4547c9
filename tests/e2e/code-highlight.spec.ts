import { expect, type Locator, type Page, test } from "@playwright/test";
import { SCRIPT_PATH } from "../fixtures/fake-openai/server";
import { hydrated, openNewChat } from "./helpers";
import { MAIN_FAKE_PORT, MAIN_URL } from "./servers";

const CODE = [
  "export function greet(name: string): number {",
  "  const count = 42;",
  '  return ("Hello, " + name).length + count;',
  "}",
].join("\n");
const REPLY = `Here is the function:\n\n\`\`\`ts\n${CODE}\n\`\`\`\n\nIt returns a number.`;

/** The next reply of the e2e fake provider (it runs in its own process). */
async function scriptReply(page: Page, text: string): Promise<void> {
  const response = await page.request.post(`http://127.0.0.1:${MAIN_FAKE_PORT}${SCRIPT_PATH}`, {
    data: [{ text }],
  });
  expect(response.ok()).toBe(true);
}

/** The computed colour of every highlighted token in the block, in order. */
function tokenColours(block: Locator): Promise<string[]> {
  return block
    .locator("[data-streamdown=code-block-body] code span span")
    .evaluateAll((spans) => spans.map((span) => getComputedStyle(span).color));
}

test("a fenced TypeScript block in a reply is highlighted in light and dark, from the app itself, and copies", async ({
  page,
  context,
}) => {
  const elsewhere: string[] = [];
  page.on("request", (request) => {
    const url = request.url();
    if (!url.startsWith(MAIN_URL) && !url.startsWith("data:") && !url.startsWith("blob:")) {
      elsewhere.push(url);
    }
  });
  await page.emulateMedia({ colorScheme: "light" });
  await openNewChat(page, `e2e-code-${Date.now()}@example.com`);
  await page.getByLabel("Model").selectOption("fake:fake-model");

  await scriptReply(page, REPLY);
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("Write me a greeting function in TypeScript");
  await box.press("Enter");
  await expect(page.getByRole("button", { name: "Message stats" })).toBeVisible({
    timeout: 30_000,
  });

  const block = page.locator("[data-role=assistant] [data-streamdown=code-block]").last();
  await expect(block).toContainText("const count = 42;");
  await expect(block).toContainText("ts");
  // Highlighted: tokens in several colours (keywords, strings, numbers, types), not one.
  await expect
    .poll(async () => new Set(await tokenColours(block)).size, { timeout: 15_000 })
    .toBeGreaterThanOrEqual(4);
  const light = await tokenColours(block);
  await page.screenshot({ path: "test-results/code-highlight-light.png" });

  // Dark follows the system: the same tokens take the dark theme's colours.
  await page.emulateMedia({ colorScheme: "dark" });
  await expect(page.locator("html")).toHaveClass(/dark/);
  await expect.poll(async () => (await tokenColours(block)).join()).not.toBe(light.join());
  const dark = await tokenColours(block);
  expect(dark).toHaveLength(light.length);
  expect(new Set(dark).size).toBeGreaterThanOrEqual(4);
  await page.screenshot({ path: "test-results/code-highlight-dark.png" });

  // The block's copy button puts the code on the clipboard (Streamdown ends it with a newline).
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: MAIN_URL });
  await block.getByRole("button", { name: "Copy Code" }).click();
  await expect
    .poll(() => page.evaluate(() => navigator.clipboard.readText()))
    .toMatch(/^export function greet/);
  expect((await page.evaluate(() => navigator.clipboard.readText())).trimEnd()).toBe(CODE);

  // Grammars and themes came from the app's own bundle: nothing was asked of another host.
  expect(elsewhere).toEqual([]);

  // And a reload renders the stored reply highlighted again.
  await page.reload();
  await hydrated(page);
  const again = page.locator("[data-role=assistant] [data-streamdown=code-block]").last();
  await expect
    .poll(async () => new Set(await tokenColours(again)).size, { timeout: 15_000 })
    .toBeGreaterThanOrEqual(4);
  expect(elsewhere).toEqual([]);
});
