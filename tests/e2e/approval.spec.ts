import { type Browser, expect, type Page, test } from "@playwright/test";
import { hydrated, PASSWORD, registerUser } from "./helpers";
import { APPROVAL_URL } from "./servers";

// This server runs REGISTRATION=approval, the default, on a store of its own: the first account
// registered here is its admin.
test.use({ baseURL: APPROVAL_URL });

async function newPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ baseURL: APPROVAL_URL });
  return context.newPage();
}

/** Registers through the real form and lands on the waiting page. */
async function registerAndWait(page: Page, email: string): Promise<void> {
  await page.goto("/register");
  await hydrated(page);
  await expect(
    page.getByText("An admin approves new accounts before they can chat."),
  ).toBeVisible();
  await page.getByLabel("Name").fill(email.split("@")[0] ?? "user");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByRole("heading", { name: "Waiting for approval" })).toBeVisible();
  await hydrated(page);
}

test("a new account waits, an admin approves it in Admin → Users, then it chats until its quota", async ({
  browser,
}) => {
  const stamp = Date.now();
  const adminEmail = `e2e-approver-${stamp}@example.com`;
  const userEmail = `e2e-waiting-${stamp}@example.com`;

  const admin = await newPage(browser);
  // A fresh server: the sign-in page says how to begin, true to how the first account is made.
  await admin.goto("/login");
  await hydrated(admin);
  const hint = admin.getByTestId("first-run-hint");
  await expect(hint).toContainText("Nobody has an account on this server yet.");
  await expect(hint).toContainText("it becomes the admin");
  await hint.getByRole("link", { name: "Create the first account" }).click();
  await expect(admin).toHaveURL(/\/register$/);
  await expect(
    admin.getByText("You are the first user: this account will be the admin."),
  ).toBeVisible();
  await registerUser(admin, adminEmail);

  const user = await newPage(browser);
  // Once an account exists, the hint is gone.
  await user.goto("/login");
  await hydrated(user);
  await expect(user.getByRole("heading", { name: "Sign in to Fold" })).toBeVisible();
  await expect(user.getByTestId("first-run-hint")).toHaveCount(0);
  await registerAndWait(user, userEmail);
  // Every API refuses a waiting account with a clear code; the chat pages send it back here.
  const refused = await user.request.get("/api/chats");
  expect(refused.status()).toBe(403);
  expect(await refused.json()).toMatchObject({ error: { code: "forbidden:pending_approval" } });
  await user.goto("/");
  await expect(user).toHaveURL(/\/waiting$/);
  await user.screenshot({ path: "test-results/waiting-for-approval.png" });

  await admin.getByRole("link", { name: "Admin · Users" }).click();
  await expect(admin.getByRole("heading", { name: "Users" })).toBeVisible();
  await hydrated(admin);
  const row = admin.locator(`tr[data-user-email="${userEmail}"]`);
  await expect(row.getByTestId("user-status")).toHaveText("waiting");
  await admin.screenshot({ path: "test-results/admin-users.png", fullPage: true });
  // By keyboard: Approve goes with the approval, and focus stays in the row, on the account,
  // not on the page nor on another action a second Enter would take.
  await row.getByRole("button", { name: "Approve" }).focus();
  await admin.keyboard.press("Enter");
  await expect(row.getByTestId("user-status")).toHaveText("active");
  await expect(row.locator("td").first()).toBeFocused();
  // One message a day for this user.
  await row.getByLabel("Messages / day").fill("1");
  await row.getByRole("button", { name: "Save" }).click();
  await expect(row.getByText("Saved")).toBeVisible();

  await user.getByRole("button", { name: "Check again" }).click();
  await expect(user.getByRole("heading", { name: "Welcome to Fold" })).toBeVisible();
  await hydrated(user);
  await user.getByRole("button", { name: "New chat" }).click();
  await expect(user).toHaveURL(/\/chat\//);
  await hydrated(user);
  await user.getByLabel("Model").selectOption("demo:demo");
  const box = user.getByRole("textbox", { name: "Message" });
  await box.fill("Hello after approval");
  await box.press("Enter");
  await expect(user.getByRole("button", { name: "Message stats" })).toHaveCount(1);

  // The second message is over the quota: the composer says so, and when it resets.
  await box.fill("One more, please");
  await box.press("Enter");
  const notice = user.getByTestId("limit-notice");
  await expect(notice).toContainText("You have used all 1 message of today's quota.");
  await expect(notice).toContainText("It resets at midnight UTC");
  // Said by a screen reader: it came into a live region that was there before it.
  await expect(user.getByRole("status").filter({ has: notice })).toHaveCount(1);
  await expect(user.getByRole("button", { name: "Message stats" })).toHaveCount(1);
  // The refused message was not stored, and the chat does not pretend it was; its text is
  // back in the message box, to send once the quota resets.
  await expect(user.locator("[data-role=user]")).toHaveCount(1);
  await expect(box).toHaveValue("One more, please");
  await user.screenshot({ path: "test-results/quota-notice.png" });

  // The admin sees the day's message spent and resets the usage: the same message goes through.
  await admin.reload();
  await hydrated(admin);
  await expect(row.getByTestId("user-usage")).toContainText("1 / 1 messages");
  await row.getByRole("button", { name: "Reset usage" }).click();
  await expect(row.getByTestId("user-usage")).toContainText("0 / 1 messages");
  await expect(row.getByRole("alert")).toHaveCount(0);
  await user.getByRole("button", { name: "Send message" }).click();
  await expect(user.getByRole("button", { name: "Message stats" })).toHaveCount(2);

  // Another admin (here, the API) gives the user three a day: Refresh shows it in the form.
  const userId = await row.getAttribute("data-user-id");
  const patched = await admin.request.patch(`/api/admin/users/${userId}`, {
    headers: { origin: new URL(admin.url()).origin },
    data: { dailyMessageLimit: 3 },
  });
  expect(patched.status()).toBe(200);
  await admin.getByRole("button", { name: "Refresh" }).click();
  await expect(row.getByLabel("Messages / day")).toHaveValue("3");

  // Two admins at once, each changing another limit: a Save sends only the limit changed here,
  // so the other admin's stays (it used to be written back to what this page had loaded).
  const origin = { origin: new URL(admin.url()).origin };
  const other = await admin.request.patch(`/api/admin/users/${userId}`, {
    headers: origin,
    data: { dailyTokenLimit: 50_000 },
  });
  expect(other.status()).toBe(200);
  await row.getByLabel("Messages / day").fill("4");
  await row.getByRole("button", { name: "Save" }).click();
  await expect(row.getByText("Saved")).toBeVisible();
  // The form shows what is stored now, the other admin's number included.
  await expect(row.getByLabel("Tokens / day")).toHaveValue("50000");
  const stored = await admin.request.get("/api/admin/users");
  const account = (
    (await stored.json()) as { users: Array<{ id: string; limits: unknown }> }
  ).users.find((u) => u.id === userId);
  expect(account?.limits).toEqual({ dailyMessageLimit: 4, dailyTokenLimit: 50_000 });
  // The same for the defaults every user has.
  const defaults = admin.getByRole("form", { name: "Default limits" });
  await expect(defaults.getByLabel("Tokens / day")).toHaveValue("");
  const otherDefault = await admin.request.patch("/api/admin/quotas", {
    headers: origin,
    data: { dailyTokenLimit: 90_000_000 },
  });
  expect(otherDefault.status()).toBe(200);
  await defaults.getByLabel("Messages / day").fill("5000");
  await defaults.getByRole("button", { name: "Save" }).click();
  await expect(defaults.getByText("Saved")).toBeVisible();
  await expect(defaults.getByLabel("Tokens / day")).toHaveValue("90000000");
  const quotas = await admin.request.get("/api/admin/quotas");
  expect(await quotas.json()).toEqual({
    defaults: { dailyMessageLimit: 5000, dailyTokenLimit: 90_000_000 },
  });
  // Back to no defaults: other tests on this server count on none.
  const cleared = await admin.request.put("/api/admin/quotas", {
    headers: origin,
    data: { dailyMessageLimit: null, dailyTokenLimit: null },
  });
  expect(cleared.status()).toBe(200);

  // A Refresh the server answered from before a Save, arriving after it, does not put the old
  // limit back: the list is read again. The first list request is held once the server answered.
  let held = 0;
  const { promise: serverAnswered, resolve: answered } = Promise.withResolvers<void>();
  const { promise: released, resolve: release } = Promise.withResolvers<void>();
  await admin.route("**/api/admin/users", async (route) => {
    if (route.request().method() !== "GET" || held++ > 0) return route.continue();
    const response = await route.fetch();
    answered();
    await released;
    // The page may have given up on this request (it asked again): nothing to answer then.
    await route.fulfill({ response }).catch(() => undefined);
  });
  const refresh = admin.getByRole("button", { name: "Refresh" });
  await refresh.click();
  await serverAnswered;
  await row.getByLabel("Messages / day").fill("6");
  await row.getByRole("button", { name: "Save" }).click();
  await expect(row.getByText("Saved")).toBeVisible();
  release();
  await expect(refresh).not.toHaveAttribute("aria-disabled", "true");
  await expect(row.getByLabel("Messages / day")).toHaveValue("6");
  await expect(row.getByTestId("user-usage")).toContainText("/ 6 messages");
  await admin.unroute("**/api/admin/users");

  // And deletes the account, after a confirmation: the row is gone. Focus never falls to the
  // page: asked to confirm, it is on Keep; kept, back on Delete; deleted, on the next row.
  const deleteButton = row.getByRole("button", { name: "Delete", exact: true });
  await deleteButton.click();
  await expect(row.getByRole("button", { name: "Keep" })).toBeFocused();
  await admin.keyboard.press("Enter");
  await expect(deleteButton).toBeFocused();
  await deleteButton.click();
  await row.getByRole("button", { name: `Delete ${userEmail} and their chats` }).click();
  await expect(admin.locator(`tr[data-user-email="${userEmail}"]`)).toHaveCount(0);
  await expect(admin.locator("tr[data-user-id] button:focus")).toHaveCount(1);
});
