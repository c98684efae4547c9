import { expect, type Locator, type Page, test } from "@playwright/test";
import { expectNoAxeViolations } from "./axe";
import { hydrated, openNewChat, registerUser } from "./helpers";

// Every page a user reaches, in light and in dark (the admin pages: admin-models.spec.ts,
// whose user is the server's admin).
for (const colorScheme of ["light", "dark"] as const) {
  test.describe(`${colorScheme} mode`, () => {
    test.use({ colorScheme });
    // Several full axe-core runs each: more than the default minute on a busy machine.
    test.setTimeout(180_000);

    test("sign-in, register and not-found pages have no axe-core violations", async ({ page }) => {
      await page.goto("/login");
      await hydrated(page);
      await expect(page.getByRole("heading", { name: "Sign in to Fold" })).toBeVisible();
      await expectNoAxeViolations(page, `/login (${colorScheme})`);

      await page.goto("/register");
      await hydrated(page);
      await expect(page.getByRole("heading", { name: "Create your Fold account" })).toBeVisible();
      await expectNoAxeViolations(page, `/register (${colorScheme})`);

      const response = await page.goto("/no-such-page");
      expect(response?.status()).toBe(404);
      await hydrated(page);
      await expect(page.getByRole("heading", { name: "This page does not exist" })).toBeVisible();
      await expectNoAxeViolations(page, `404 (${colorScheme})`);
    });

    test("home and chat pages have no axe-core violations", async ({ page }) => {
      await registerUser(page, `e2e-axe-${colorScheme}-${Date.now()}@example.com`);
      await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();
      await expectNoAxeViolations(page, `home (${colorScheme})`);

      await page.getByRole("button", { name: "New chat" }).click();
      await expect(page).toHaveURL(/\/chat\//, { timeout: 20_000 });
      await hydrated(page);
      await page.getByLabel("Model").selectOption("fake:fake-model");
      const box = page.getByRole("textbox", { name: "Message" });
      await box.fill("Write a short list and a code sample, please.");
      await box.press("Enter");
      await expect(page.getByRole("button", { name: "Message stats" })).toBeVisible();
      await expectNoAxeViolations(page, `chat (${colorScheme})`);

      // The open hover card and stats popover are part of the page too.
      await page.getByTestId("context-ring").hover();
      await expect(page.getByTestId("context-details")).toBeVisible();
      await expectNoAxeViolations(page, `chat with the ring's card open (${colorScheme})`);
      await page.mouse.move(0, 0);
      await page.getByRole("button", { name: "Message stats" }).click();
      await expect(page.getByRole("dialog", { name: "Stats" })).toBeVisible();
      await expectNoAxeViolations(page, `chat with the stats open (${colorScheme})`);
    });

    // axe-core does not check focus indicators: the contrast WCAG asks of them (3:1 against
    // what is next to them) is measured here, on the computed colors.
    test("the message box and the model picker show the keyboard's focus at 3:1 or more", async ({
      page,
    }) => {
      await openNewChat(page, `e2e-focus-ring-${colorScheme}-${Date.now()}@example.com`);
      const box = page.getByRole("textbox", { name: "Message" });
      await box.focus();
      const composer = box.locator("xpath=ancestor::div[contains(@class,'rounded-2xl')][1]");
      // The border eases into its focus color (a transition): read once it has.
      const borderContrast = async () => {
        const [border, inside, outside] = await composer.evaluate((element) => {
          const style = getComputedStyle(element);
          const around = getComputedStyle(element.closest("form") ?? document.body);
          return [style.borderTopColor, style.backgroundColor, around.backgroundColor];
        });
        return Math.min(
          await contrast(page, border, inside),
          await contrast(page, border, outside),
        );
      };
      await expect.poll(borderContrast).toBeGreaterThanOrEqual(3);

      const picker = page.getByLabel("Model");
      for (
        let i = 0;
        i < 10 && !(await picker.evaluate((e) => e === document.activeElement));
        i++
      ) {
        await page.keyboard.press("Tab");
      }
      await expect(picker).toBeFocused();
      const [ring, under] = await focusRing(picker);
      expect(ring).not.toBe("transparent");
      expect(await contrast(page, ring, under)).toBeGreaterThanOrEqual(3);

      // A primary button (near-black, where the browser's own outline does not show).
      await page.goto("/");
      await hydrated(page);
      const newChat = page.getByRole("button", { name: "New chat" });
      for (
        let i = 0;
        i < 20 && !(await newChat.evaluate((e) => e === document.activeElement));
        i++
      ) {
        await page.keyboard.press("Tab");
      }
      await expect(newChat).toBeFocused();
      // The ring eases in (the button's transition): read once it is painted.
      await expect.poll(async () => (await focusRing(newChat))[0]).not.toBe("transparent");
      const [buttonRing, beside] = await focusRing(newChat);
      expect(buttonRing).not.toBe("transparent");
      expect(await contrast(page, buttonRing, beside)).toBeGreaterThanOrEqual(3);
    });
  });
}

/**
 * A focused control's ring (the box shadow that spreads furthest: a ring set off from its
 * control has a shadow of the background's color under it) and the background it is painted on.
 */
function focusRing(control: Locator): Promise<[string, string]> {
  return control.evaluate((element) => {
    const shadows = getComputedStyle(element).boxShadow.split(/,(?![^(]*\))/);
    let ring = "transparent";
    let widest = 0;
    for (const shadow of shadows) {
      const match = shadow.trim().match(/^(.*\)|\S+)\s+(?:-?[\d.]+px\s+){3}([\d.]+)px/);
      if (match && Number(match[2]) > widest) [ring, widest] = [match[1] ?? ring, Number(match[2])];
    }
    let around = element.parentElement;
    while (around && getComputedStyle(around).backgroundColor.match(/rgba\(.*, 0\)|transparent/)) {
      around = around.parentElement;
    }
    return [ring, getComputedStyle(around ?? document.body).backgroundColor];
  });
}

/** The WCAG contrast ratio of two CSS colors, as the browser paints them (a canvas reads them). */
async function contrast(page: Page, a: string, b: string): Promise<number> {
  return page.evaluate(
    ([first, second]) => {
      const canvas = document.createElement("canvas");
      canvas.width = 1;
      canvas.height = 1;
      const context = canvas.getContext("2d", { willReadFrequently: true });
      if (!context) throw new Error("no 2d canvas");
      const luminance = (color: string) => {
        context.clearRect(0, 0, 1, 1);
        context.fillStyle = color;
        context.fillRect(0, 0, 1, 1);
        const [r = 0, g = 0, b = 0] = context.getImageData(0, 0, 1, 1).data;
        const channel = (v: number) => {
          const s = v / 255;
          return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
        };
        return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
      };
      const [light, dark] = [luminance(first), luminance(second)].sort((x, y) => y - x);
      return ((light ?? 0) + 0.05) / ((dark ?? 0) + 0.05);
    },
    [a, b] as const,
  );
}
