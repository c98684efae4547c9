import { type Browser, type BrowserContext, expect, test } from "@playwright/test";
import pg from "pg";
import { hydrated, PASSWORD, registerUser, send } from "./helpers";
import { ownServerPerFile } from "./own-server";
import { ADMIN_USERS_PORT } from "./servers";

/**
 * Admin → Users on a server with more accounts than one page shows: the table says how many it
 * shows of how many, adds the next page on request, and searches names and addresses; and what
 * an account disabled there sees. A server of its own, whose Postgres database the spec fills
 * with accounts directly (signing up 130 accounts through the form would time nothing but
 * password hashing).
 */

const BULK = 130;

const own = ownServerPerFile({
  port: ADMIN_USERS_PORT,
  provider: { models: [{ id: "fake-model", maxModelLen: 8192 }] },
});

/**
 * Browsers of a test's own (an admin, a user, a stranger), closed after it: left open, their
 * pages keep connections to the spec's server, which then cannot shut down.
 */
const contexts: BrowserContext[] = [];
async function newPage(browser: Browser) {
  const context = await browser.newContext();
  contexts.push(context);
  return context.newPage();
}
test.afterEach(async () => {
  await Promise.all(contexts.splice(0).map((context) => context.close()));
});

test("the users table shows a page of many accounts, adds the next on request, and searches them", async ({
  page,
}) => {
  // The first account is the admin.
  await registerUser(page, "many-admin@example.com", own.url);
  const client = new pg.Client({ connectionString: own.databaseUrl });
  await client.connect();
  try {
    await client.query(
      `insert into "user" (id, name, email, status)
       select 'bulk-' || g,
         -- The one waiting for approval signed up with the longest one-word name the form takes.
         case when g = 77 then repeat('W', 100) else 'Bulk ' || g end,
         'bulk-' || g || '@example.com',
         case when g = 77 then 'pending' else 'active' end
       from generate_series(1, $1::int) g`,
      [BULK],
    );
  } finally {
    await client.end();
  }

  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${own.url}/admin/users`);
  await hydrated(page);
  const rows = page.locator("tbody tr[data-user-id]");
  const status = page.getByRole("status").filter({ hasText: /account/ });
  await expect(status).toHaveText(`Showing 100 of ${BULK + 1} accounts`);
  await expect(rows).toHaveCount(100);
  // The account waiting for approval comes first, whatever page it would fall on by age.
  await expect(rows.first()).toHaveAttribute("data-user-email", "bulk-77@example.com");
  // Its name wraps: the row's Approve stays in view, the table no wider than the page.
  const approve = rows.first().getByRole("button", { name: /Approve/ });
  await expect(approve).toBeInViewport({ ratio: 1 });
  const table = page.locator("table").first();
  expect(
    await table.evaluate((el) => el.getBoundingClientRect().right <= window.innerWidth + 1),
  ).toBe(true);

  const more = page.getByRole("button", { name: "Show more accounts" });
  const search = page.getByRole("searchbox", { name: "Search accounts" });
  // A next page that cannot be loaded says so under the button, for this list only: another
  // search (with pages of its own) does not show it.
  const moreFailed = page.getByText("More accounts could not be loaded");
  await page.route("**/api/admin/users?after=*", (route) => route.abort());
  await more.click();
  await expect(moreFailed).toBeVisible();
  await expect(rows).toHaveCount(100);
  await search.fill("bulk");
  await expect(status).toHaveText(`Showing 100 of ${BULK} accounts`);
  await expect(more).toBeVisible();
  await expect(moreFailed).toHaveCount(0);
  await page.unroute("**/api/admin/users?after=*");
  await search.fill("");
  await expect(status).toHaveText(`Showing 100 of ${BULK + 1} accounts`);

  await more.focus();
  await page.keyboard.press("Enter");
  await expect(rows).toHaveCount(BULK + 1);
  await expect(status).toHaveText(`${BULK + 1} accounts`);
  await expect(more).toHaveCount(0);
  // Each account once.
  const ids = await rows.evaluateAll((list) => list.map((row) => row.getAttribute("data-user-id")));
  expect(new Set(ids).size).toBe(BULK + 1);
  // Refresh reads again every account shown, not only the first page.
  const refresh = page.getByRole("button", { name: "Refresh", exact: true });
  const firstPage = page.waitForResponse((r) => /\/api\/admin\/users$/.test(r.url()));
  await refresh.click();
  await firstPage;
  await expect(refresh).toHaveAttribute("aria-disabled", "false");
  await expect(rows).toHaveCount(BULK + 1);
  await expect(status).toHaveText(`${BULK + 1} accounts`);
  await expect(more).toHaveCount(0);

  await search.fill("BULK-12");
  // bulk-12 and bulk-120 … bulk-129, by address; case aside.
  await expect(status).toHaveText("11 accounts match “BULK-12”");
  await expect(rows).toHaveCount(11);
  // With no long name among them, a short address keeps to one line, on a desktop narrow enough
  // that the columns compete: the others do not squeeze the account column until
  // "bulk-12@example.co" breaks from its "m".
  await page.setViewportSize({ width: 1024, height: 800 });
  const wrapped = await rows
    .getByTestId("user-email")
    .evaluateAll((list) =>
      list
        .filter(
          (el) =>
            el.getBoundingClientRect().height >
            Number.parseFloat(getComputedStyle(el).lineHeight) * 1.5,
        )
        .map((el) => el.textContent),
    );
  expect(wrapped, "addresses broken across lines on a desktop").toEqual([]);
  await page.setViewportSize({ width: 1280, height: 800 });
  await search.fill("nobody-here");
  await search.press("Enter");
  await expect(page.getByText("No account matches “nobody-here”.")).toBeVisible();
  await expect(rows).toHaveCount(0);
  await search.fill("");
  await expect(status).toHaveText(`Showing 100 of ${BULK + 1} accounts`);

  // A search that cannot reach the server says so, keeps the table it had, and is not left
  // "Searching…"; Try again asks again.
  const failed = page.getByRole("alert").filter({ hasText: "Refresh failed" });
  await page.route("**/api/admin/users?q=*", (route) => route.abort());
  await search.fill("bulk-5");
  await expect(failed).toBeVisible();
  await expect(status).toHaveText(`Showing 100 of ${BULK + 1} accounts`);
  // Show more adds the next page of the table shown, not a page of the search that failed, and
  // the count says which accounts those are.
  await more.click();
  await expect(rows).toHaveCount(BULK + 1);
  await expect(status).toHaveText(`${BULK + 1} accounts`);
  await page.unroute("**/api/admin/users?q=*");
  await page.getByRole("button", { name: "Try again" }).click();
  await expect(status).toHaveText("11 accounts match “bulk-5”");
  await expect(failed).toHaveCount(0);
  await search.fill("");
  await expect(status).toHaveText(`Showing 100 of ${BULK + 1} accounts`);

  // On a phone the search and the count stack, and each account's row stacks its cells: its
  // actions are on the screen, not past the right edge of a table that scrolls sideways.
  await page.setViewportSize({ width: 390, height: 844 });
  for (const colorScheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme });
    await expect(search).toBeVisible();
    for (const name of ["Approve", "Disable", "Delete"]) {
      const box = await rows.first().getByRole("button", { name, exact: true }).boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= 390, `${name} on a phone`).toBe(true);
    }
    // The column headers are for screen readers there: the usage says what it counts.
    const usageLabel = () =>
      rows
        .first()
        .getByTestId("user-usage")
        .evaluate((cell) => getComputedStyle(cell, "::before").content);
    expect(await usageLabel()).toBe('"Today"');
    const { scrollWidth, viewport } = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      viewport: window.innerWidth,
    }));
    expect(scrollWidth, `the page is ${scrollWidth}px wide in ${viewport}px`).toBeLessThanOrEqual(
      viewport,
    );
    await page.screenshot({ path: `test-results/screens/admin-users-phone-${colorScheme}.png` });
  }
});

test("an account disabled while signed in is sent to sign in, told why, and only it is told", async ({
  browser,
}) => {
  const stamp = Date.now();
  const adminEmail = `disabling-admin-${stamp}@example.com`;
  const userEmail = `disabled-${stamp}@example.com`;
  const admin = await newPage(browser);
  await registerUser(admin, adminEmail, own.url);
  // Made an admin here: the server's first account (its admin) may be another test's.
  const client = new pg.Client({ connectionString: own.databaseUrl });
  await client.connect();
  let userId: string;
  const user = await newPage(browser);
  try {
    await client.query(`update "user" set role = 'admin' where email = $1`, [adminEmail]);
    await registerUser(user, userEmail, own.url);
    const { rows } = await client.query<{ id: string }>(`select id from "user" where email = $1`, [
      userEmail,
    ]);
    userId = rows[0]?.id ?? "";
  } finally {
    await client.end();
  }
  // Two chats, each open in a tab of the user's when the admin disables the account; a third
  // tab is on the home page.
  const chatPaths: string[] = [];
  for (const title of ["Open one", "Other one"]) {
    const created = await user.request.post(`${own.url}/api/chats`, {
      headers: { origin: own.url },
      data: { title },
    });
    expect(created.status()).toBe(201);
    chatPaths.push(`/chat/${((await created.json()) as { chat: { id: string } }).chat.id}`);
  }
  const [chatPath = "", otherPath = ""] = chatPaths;
  const sending = await user.context().newPage();
  const home = await user.context().newPage();
  for (const [tab, path] of [
    [user, chatPath],
    [sending, otherPath],
    [home, "/"],
  ] as const) {
    await tab.goto(`${own.url}${path}`);
    await hydrated(tab);
  }
  await expect(user.getByRole("textbox", { name: "Message" })).toBeEnabled();
  await expect(sending.getByRole("textbox", { name: "Message" })).toBeEnabled();

  const disabled = await admin.request.patch(`${own.url}/api/admin/users/${userId}`, {
    headers: { origin: own.url },
    data: { status: "disabled" },
  });
  expect(disabled.status()).toBe(200);

  // Whatever the user does next sends them to sign in, saying why, and back to the page they
  // were on once they can: New chat, sending a message, opening another page.
  const warningText =
    "An admin disabled this account, so you were signed out. Ask the server's admin if that is a mistake.";
  const signInFrom = (path: string) =>
    `${own.url}/login?next=${encodeURIComponent(path)}&reason=disabled`;
  await user.getByRole("button", { name: "New chat", exact: true }).click();
  await expect(user).toHaveURL(signInFrom(chatPath));
  const warning = user.getByTestId("sign-in-warning");
  await expect(warning).toHaveText(warningText);
  await send(sending, "Still there?");
  await expect(sending).toHaveURL(signInFrom(otherPath));
  await expect(sending.getByTestId("sign-in-warning")).toHaveText(warningText);
  await home.getByRole("link", { name: "Other one" }).click();
  await expect(home).toHaveURL(/\/login\?.*reason=disabled/);
  await expect(home.getByTestId("sign-in-warning")).toHaveText(warningText);
  // The API says so too.
  const refused = await user.request.get(`${own.url}/api/chats`);
  expect(refused.status()).toBe(403);
  expect(await refused.json()).toMatchObject({ error: { code: "forbidden:account_disabled" } });
  await user.goto(`${own.url}${chatPath}`);
  await expect(user).toHaveURL(signInFrom(chatPath));
  await expect(warning).toBeVisible();
  // Signing in again is refused for the same reason.
  await hydrated(user);
  await user.getByLabel("Email").fill(userEmail);
  await user.getByLabel("Password").fill(PASSWORD);
  await user.getByRole("button", { name: "Sign in" }).click();
  await expect(
    user
      .getByRole("alert")
      .filter({ hasText: "This account is disabled. Ask the server's admin." }),
  ).toBeVisible();

  // Anyone else sent to sign in from the same page is told nothing about the account.
  const stranger = await newPage(browser);
  await stranger.goto(`${own.url}${chatPath}`);
  await expect(stranger).toHaveURL(`${own.url}/login?next=${encodeURIComponent(chatPath)}`);
  await hydrated(stranger);
  await expect(stranger.getByTestId("sign-in-warning")).toHaveCount(0);
  // Nor by a link with the reason written into it: only the disabled session's own cookie tells.
  await stranger.goto(`${own.url}/login?reason=disabled`);
  await hydrated(stranger);
  await expect(stranger.getByTestId("sign-in-warning")).toHaveCount(0);
});
