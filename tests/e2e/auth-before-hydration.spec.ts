import { expect, test } from "@playwright/test";
import { PASSWORD } from "./helpers";

/**
 * The sign-in and sign-up forms sent before their script runs (a slow phone, a script that failed
 * to load): the browser sends them itself. The password must not ride in the address, where the
 * history, the server's and any proxy's logs and the next page's Referer keep it.
 */

// No script at all: what the browser does with the form before the page is hydrated.
test.use({ javaScriptEnabled: false });

for (const [path, heading] of [
  ["/login", "Sign in to Fold"],
  ["/register", "Create your Fold account"],
] as const) {
  test(`a ${path.slice(1)} form sent before the page's script runs keeps the password out of the address`, async ({
    page,
  }) => {
    const sent: string[] = [];
    page.on("request", (request) => {
      if (request.isNavigationRequest()) sent.push(request.url());
    });
    await page.goto(path);
    await page.locator("input[name=email]").fill(`e2e-no-script-${Date.now()}@example.com`);
    await page.locator("input[name=password]").fill(PASSWORD);
    await page.locator("button[type=submit]").click();
    await page.waitForLoadState("load");
    // The same form again, to try once the page works; the address and every request without it.
    await expect(page.getByRole("heading", { name: heading })).toBeVisible();
    expect(sent.length).toBeGreaterThan(1);
    for (const url of [...sent, page.url()]) {
      expect(new URL(url).searchParams.has("password")).toBe(false);
      expect(decodeURIComponent(url.replaceAll("+", " "))).not.toContain(PASSWORD);
    }
  });
}
