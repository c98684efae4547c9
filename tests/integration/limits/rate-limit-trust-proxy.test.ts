import { beforeAll, expect, it, vi } from "vitest";

vi.hoisted(() => {
  // One reverse proxy in front of Fold: it appends the address it saw to X-Forwarded-For.
  process.env.TRUST_PROXY = "1";
  process.env.RATE_LIMIT_SIGN_UP_PER_HOUR = "2";
});

import * as authRoute from "@/app/api/auth/[...all]/route";
import type { Database } from "@/lib/db/client";
import { installPeerAddressStamp, PEER_ADDRESS_HEADER } from "@/lib/limits/peer-address";
import { PASSWORD } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { call } from "../../helpers/http";

beforeAll(() => installPeerAddressStamp());

const PROXY = "10.0.0.2";

function signUp(database: Database, email: string, forwardedFor: string) {
  return call(database, authRoute.POST, {
    path: "/api/auth/sign-up/email",
    method: "POST",
    body: { email, password: PASSWORD, name: "x" },
    headers: { [PEER_ADDRESS_HEADER]: PROXY, "x-forwarded-for": forwardedFor },
    params: { all: ["sign-up", "email"] },
  });
}

describeEachDriver("rate limits behind TRUST_PROXY=1", (use) => {
  it("keys on the address the proxy saw, not on what the client wrote before it", async () => {
    const database = use();
    // The client forges a different leftmost entry each time; the proxy's entry stays its own.
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      const response = await signUp(
        database,
        `forger-${i}@example.com`,
        `6.6.6.${i}, 198.51.100.7`,
      );
      statuses.push(response.status);
    }
    expect(statuses).toEqual([200, 200, 429, 429]);
    // Clients behind the same proxy are told apart by the address it appended.
    expect((await signUp(database, "neighbour@example.com", "198.51.100.8")).status).toBe(200);
  });
});
