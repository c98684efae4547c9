import { defineConfig } from "@playwright/test";
import {
  APPROVAL_FAKE_PORT,
  APPROVAL_PORT,
  APPROVAL_URL,
  MAIN_FAKE_PORT,
  MAIN_PORT,
  MAIN_URL,
} from "./tests/e2e/servers";

const SERVER_START_TIMEOUT_MS = 120_000;

export default defineConfig({
  testDir: "tests/e2e",
  outputDir: "test-results/e2e",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 60_000,
  // Most waits are on server work (a sign-up, a new chat, a turn) on a shared 2-core machine,
  // the first of each on a cold server: Playwright's default 5 s is too tight there.
  expect: { timeout: 15_000 },
  reporter: [["list"]],
  use: {
    baseURL: MAIN_URL,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      // The machine has no outside network: keep Chromium from reaching for it.
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  webServer: [
    {
      command: "node scripts/e2e-server.mjs",
      url: `${MAIN_URL}/api/health`,
      // Specs that are not about registration register and chat freely.
      env: {
        E2E_PORT: String(MAIN_PORT),
        E2E_FAKE_PORT: String(MAIN_FAKE_PORT),
        REGISTRATION: "open",
      },
      timeout: SERVER_START_TIMEOUT_MS,
      reuseExistingServer: false,
      stdout: "pipe",
      stderr: "pipe",
    },
    {
      command: "node scripts/e2e-server.mjs",
      url: `${APPROVAL_URL}/api/health`,
      // The default mode: new accounts wait for an admin (tests/e2e/approval.spec.ts).
      env: {
        E2E_PORT: String(APPROVAL_PORT),
        E2E_FAKE_PORT: String(APPROVAL_FAKE_PORT),
        REGISTRATION: "approval",
      },
      timeout: SERVER_START_TIMEOUT_MS,
      reuseExistingServer: false,
      stdout: "pipe",
      stderr: "pipe",
    },
  ],
});
