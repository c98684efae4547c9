import { expect, test } from "@playwright/test";
import { hydrated } from "./helpers";

test("pages carry a nonce CSP that still lets Fold hydrate, and refuse to be framed", async ({
  page,
}) => {
  const violations: string[] = [];
  page.on("console", (message) => {
    if (/Content[- ]Security[- ]Policy/i.test(message.text())) violations.push(message.text());
  });

  const response = await page.goto("/login");
  await hydrated(page);
  const headers = response?.headers() ?? {};
  const policy = headers["content-security-policy"] ?? "";
  const nonce = /'nonce-([^']+)'/.exec(policy)?.[1];
  expect(nonce).toBeTruthy();
  expect(policy).toContain("frame-ancestors 'none'");
  expect(policy).toContain("'strict-dynamic'");
  expect(headers["x-content-type-options"]).toBe("nosniff");
  expect(headers["referrer-policy"]).toBe("same-origin");

  // Next put this response's nonce on its scripts; a second load gets a different one.
  const scripts = page.locator("script[nonce]");
  expect(await scripts.count()).toBeGreaterThan(0);
  const second = await page.request.get("/login");
  expect(second.headers()["content-security-policy"]).not.toContain(`'nonce-${nonce}'`);

  // Nothing Fold itself sends breaks the policy.
  expect(violations).toEqual([]);

  // A script that got into the page's HTML (an XSS) has no nonce: it is blocked, and the page,
  // whose own scripts carry the nonce, still hydrates.
  await page.route("**/login", async (route) => {
    const original = await route.fetch();
    const html = (await original.text()).replace(
      "</body>",
      "<script>window.__injected = true</script></body>",
    );
    await route.fulfill({ response: original, body: html });
  });
  await page.reload();
  await hydrated(page);
  expect(
    await page.evaluate(() => (window as { __injected?: boolean }).__injected),
  ).toBeUndefined();
  expect(violations.join("\n")).toMatch(/inline script/i);
});

test("the API answers a forged cross-site write with 403", async ({ page }) => {
  const response = await page.request.post("/api/chats", {
    headers: { origin: "http://evil.example", "content-type": "text/plain" },
    data: '{"title":"forged"}',
  });
  expect(response.status()).toBe(403);
  expect(await response.json()).toMatchObject({ error: { code: "forbidden:origin" } });
  expect(response.headers()["content-security-policy"]).toBe(
    "default-src 'none'; frame-ancestors 'none'",
  );
});

test("pages name an icon that loads, so the browser asks for no missing favicon", async ({
  page,
}) => {
  const missing: string[] = [];
  page.on("response", (response) => {
    if (response.status() === 404) missing.push(response.url());
  });
  await page.goto("/login");
  await hydrated(page);
  const href = await page.locator('link[rel="icon"]').first().getAttribute("href");
  expect(href).toBeTruthy();
  const icon = await page.request.get(href ?? "");
  expect(icon.status()).toBe(200);
  expect(icon.headers()["content-type"]).toContain("image/svg+xml");
  expect(missing).toEqual([]);
});
