import { expect, test } from "@playwright/test";
import { expectNoAxeViolations } from "./axe";
import { hydrated, registerUser } from "./helpers";

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
  });
}
