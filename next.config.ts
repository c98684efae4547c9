import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Native and WASM-backed packages stay outside the server bundle.
  serverExternalPackages: ["@electric-sql/pglite", "pg", "pino", "gpt-tokenizer"],
  poweredByHeader: false,
};

export default nextConfig;
