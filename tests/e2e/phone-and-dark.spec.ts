import AxeBuilder from "@axe-core/playwright";
import { expect, type Page, test } from "@playwright/test";
import { hydrated, registerUser } from "./helpers";

/**
 * Fold on a phone and on a desktop, light and dark: screenshots under test-results/screens/
 * (look at them), and the one thing a screenshot cannot promise: no page is wider than the
 * viewport, whatever it shows.
 */

const VIEWPORTS = [
  { name: "phone", width: 390, height: 844 },
  { name: "desktop", width: 1440, height: 900 },
] as const;
const SCHEMES = ["light", "dark"] as const;

/** Long enough to wrap many times, with a word no line can hold and a fenced code block. */
const LONG_MESSAGE = [
  "Code:",
  "```ts",
  "const answer = computeTheAnswerToTheUltimateQuestionOfLifeTheUniverseAndEverything(42, { verbose: true });",
  "```",
  "",
  "A long paragraph follows. ".repeat(40),
  "",
  `An unbroken token: ${"x".repeat(300)}`,
].join("\n");

async function expectNoWiderThanViewport(page: Page, what: string) {
  const { scrollWidth, viewport } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
  }));
  expect(
    scrollWidth,
    `${what} is ${scrollWidth}px wide in a ${viewport}px viewport`,
  ).toBeLessThanOrEqual(viewport);
}

/** Text that is hard to read in this scheme: axe-core's colour-contrast rule (WCAG AA). */
async function expectReadableContrast(page: Page, what: string) {
  const { violations } = await new AxeBuilder({ page }).withRules(["color-contrast"]).analyze();
  const offenders = violations.flatMap((v) =>
    v.nodes.map((n) => `${n.target.join(" ")}: ${n.failureSummary}`),
  );
  expect(offenders, `contrast on ${what}`).toEqual([]);
}

async function shoot(page: Page, name: string) {
  await page.screenshot({ path: `test-results/screens/${name}.png` });
}

async function sessionRole(page: Page): Promise<string | undefined> {
  const response = await page.request.get("/api/auth/get-session");
  const session = (await response.json()) as { user?: { role?: string } } | null;
  return session?.user?.role;
}

test("home, a long chat and admin fit phone and desktop screens, in light and dark", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await registerUser(page, `e2e-screens-${Date.now()}@example.com`);
  const admin = (await sessionRole(page)) === "admin";
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveURL(/\/chat\//, { timeout: 20_000 });
  await hydrated(page);
  const chatUrl = page.url();
  await page.getByLabel("Model").selectOption("fake:fake-model");
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill(LONG_MESSAGE);
  await box.press("Enter");
  // Generous: this machine's CPUs are shared, and the first reply also warms the server.
  await expect(page.locator("[data-role=assistant]").last()).toContainText("Fake reply to: Code:", {
    timeout: 20_000,
  });
  // The reply quotes the start of the message, fence included: it renders as a code block.
  await expect(page.locator("[data-role=assistant] pre").last()).toBeVisible();

  for (const scheme of SCHEMES) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      const tag = `${viewport.name}-${scheme}`;

      await page.goto("/");
      await hydrated(page);
      await expect(page.locator("html")).toHaveClass(new RegExp(scheme));
      await expectNoWiderThanViewport(page, `home (${tag})`);
      await expectReadableContrast(page, `home (${tag})`);
      await shoot(page, `home-${tag}`);

      await page.goto(chatUrl);
      await hydrated(page);
      await expect(page.locator("[data-role=assistant] pre").last()).toBeVisible();
      await expectNoWiderThanViewport(page, `chat (${tag})`);
      // The timeline clips sideways, so check it too: nothing in it may be cut off (code blocks
      // scroll inside themselves).
      const timeline = await page
        .getByTestId("message-scroller")
        .evaluate((el) => ({ content: el.scrollWidth, box: el.clientWidth }));
      expect(timeline.content, `timeline (${tag})`).toBeLessThanOrEqual(timeline.box);
      await expectReadableContrast(page, `chat (${tag})`);
      // The send button and the model picker sit side by side, never on top of each other.
      const picker = await page.getByLabel("Model").boundingBox();
      const send = await page.getByRole("button", { name: "Send message" }).boundingBox();
      expect(picker && send && picker.x + picker.width <= send.x, `composer (${tag})`).toBe(true);
      // A reply has one toolbar: its pin sits in the row of Copy and Regenerate, not under it.
      const reply = page.locator("[data-role=assistant]").last();
      const copy = await reply.getByRole("button", { name: "Copy message" }).boundingBox();
      const pin = await reply.getByRole("button", { name: "Pin message" }).boundingBox();
      expect(
        copy && pin && Math.abs(pin.y + pin.height / 2 - (copy.y + copy.height / 2)) < 2,
        `a reply's toolbar (${tag})`,
      ).toBe(true);
      await shoot(page, `chat-${tag}`);

      if (viewport.name === "phone") {
        // The chat list is a drawer: closed, it takes no room; Escape closes it again.
        await expect(page.getByRole("navigation", { name: "Chats" })).toBeHidden();
        await page.getByRole("button", { name: "Open the chat list" }).click();
        const drawer = page.getByRole("dialog", { name: "Chats" });
        await expect(drawer.getByRole("navigation", { name: "Chats" })).toBeVisible();
        await expectNoWiderThanViewport(page, `drawer (${tag})`);
        await shoot(page, `drawer-${tag}`);
        await page.keyboard.press("Escape");
        await expect(drawer).toBeHidden();
        await expect(page.getByRole("button", { name: "Open the chat list" })).toBeFocused();
      }

      if (admin) {
        await page.goto("/admin/models");
        await hydrated(page);
        await expect(page.getByRole("table")).toBeVisible();
        await expectNoWiderThanViewport(page, `admin (${tag})`);
        await shoot(page, `admin-${tag}`);
      }
    }
  }
});

test("the theme toggle overrides the system's choice and is remembered", async ({ page }) => {
  await registerUser(page, `e2e-theme-${Date.now()}@example.com`);
  await page.emulateMedia({ colorScheme: "light" });
  await page.reload();
  await hydrated(page);
  await expect(page.locator("html")).not.toHaveClass(/dark/);
  const toggle = page.getByRole("button", { name: /^Theme:/ });
  await expect(toggle).toHaveAccessibleName("Theme: system");
  await toggle.click(); // system → light
  await toggle.click(); // light → dark
  await expect(toggle).toHaveAccessibleName("Theme: dark");
  await expect(page.locator("html")).toHaveClass(/dark/);
  const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.reload();
  await hydrated(page);
  await expect(page.locator("html")).toHaveClass(/dark/);
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(
    background,
  );
});
