import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it, vi } from "vitest";

const REDIS_URL = vi.hoisted(() => {
  const url = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
  process.env.REDIS_URL = url;
  process.env.RATE_LIMIT_SIGN_UP_PER_HOUR = "2";
  return url;
});

import { createClient } from "redis";
import * as authRoute from "@/app/api/auth/[...all]/route";
import type { Database } from "@/lib/db/client";
import { rateLimit } from "@/lib/db/schema";
import { installPeerAddressStamp, PEER_ADDRESS_HEADER } from "@/lib/limits/peer-address";
import { PASSWORD } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { call } from "../../helpers/http";

const IN_CI = process.env.CI === "true";

async function probeRedis(): Promise<string | null> {
  const client = createClient({
    url: REDIS_URL,
    socket: { connectTimeout: 2_000, reconnectStrategy: false },
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.ping();
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.close().catch(() => undefined);
  }
}

const redisProblem = await probeRedis();
if (redisProblem) {
  console.warn(
    `\n*** REDIS RATE-LIMIT SUITE ${IN_CI ? "FAILS" : "SKIPPED"}: cannot reach ${REDIS_URL} (${redisProblem}). Set TEST_REDIS_URL. ***\n`,
  );
}

beforeAll(() => installPeerAddressStamp());

function signUp(database: Database, email: string, peer: string) {
  return call(database, authRoute.POST, {
    path: "/api/auth/sign-up/email",
    method: "POST",
    body: { email, password: PASSWORD, name: "x" },
    headers: {
      [PEER_ADDRESS_HEADER]: peer,
      "x-forwarded-for": `198.51.100.${Math.floor(Math.random() * 250)}`,
    },
    params: { all: ["sign-up", "email"] },
  });
}

if (redisProblem && IN_CI) {
  describe("rate limits on Redis", () => {
    it("needs a reachable Redis server under CI", () => {
      throw new Error(`Redis unreachable at ${REDIS_URL}: ${redisProblem}`);
    });
  });
} else {
  (redisProblem ? describe.skip : describe)("rate limits on Redis", () => {
    describeEachDriver("REDIS_URL set", (use) => {
      it("keeps the counts in Redis, keyed on the socket address", async () => {
        const database = use();
        // Redis outlives the test: a fresh /64 per run keeps runs apart.
        const peer = `2001:db8:${randomBytes(2).toString("hex")}:${randomBytes(2).toString("hex")}::1`;
        const statuses = [];
        for (let i = 0; i < 3; i++) {
          const email = `redis-${randomBytes(4).toString("hex")}@example.com`;
          statuses.push((await signUp(database, email, peer)).status);
        }
        expect(statuses).toEqual([200, 200, 429]);
        // Nothing was kept in the database's store.
        expect(await database.db.select().from(rateLimit)).toEqual([]);
      });
    });
  });
}
