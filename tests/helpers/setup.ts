// Quiet logs and a fixed secret so tests never touch ./.data or print noise.
process.env.LOG_LEVEL ??= "silent";
process.env.BETTER_AUTH_SECRET ??= "test-secret-test-secret-test-secret-0123";
process.env.NEXT_TELEMETRY_DISABLED = "1";
