import type { NextConfig } from "next";
import { API_CONTENT_SECURITY_POLICY, SECURITY_HEADERS } from "./lib/http/security-headers";

const nextConfig: NextConfig = {
  // Native and WASM-backed packages stay outside the server bundle; rate-limiter-flexible loads
  // drizzle-orm by a computed import that a bundler cannot follow.
  serverExternalPackages: [
    "@electric-sql/pglite",
    "pg",
    "pino",
    "gpt-tokenizer",
    "rate-limiter-flexible",
  ],
  poweredByHeader: false,
  // `forbidden()` and app/forbidden.tsx: a non-admin on an admin page gets a real 403 page.
  experimental: { authInterrupts: true },
  // Pages get their Content-Security-Policy, with a nonce, from proxy.ts.
  async headers() {
    return [
      { source: "/:path*", headers: SECURITY_HEADERS },
      {
        source: "/api/:path*",
        headers: [{ key: "Content-Security-Policy", value: API_CONTENT_SECURITY_POLICY }],
      },
    ];
  },
};

export default nextConfig;
