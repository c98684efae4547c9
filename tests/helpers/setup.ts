// Quiet logs and a fixed secret so tests never touch ./.data or print noise.
process.env.LOG_LEVEL ??= "silent";
process.env.BETTER_AUTH_SECRET ??= "test-secret-test-secret-test-secret-0123";
process.env.NEXT_TELEMETRY_DISABLED = "1";
// Tests that are not about registration or rate limits register and chat freely; the ones that
// are (tests/integration/limits, tests/integration/auth) set these themselves.
process.env.REGISTRATION ??= "open";
process.env.RATE_LIMIT_SIGN_IN_PER_MINUTE ??= "0";
process.env.RATE_LIMIT_SIGN_IN_FAILURES_PER_ACCOUNT ??= "0";
process.env.RATE_LIMIT_SIGN_UP_PER_HOUR ??= "0";
process.env.RATE_LIMIT_TURNS_PER_MINUTE ??= "0";
