import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientAddress, normalizeAddress, UNKNOWN_CLIENT } from "@/lib/limits/client-address";
import { installPeerAddressStamp, PEER_ADDRESS_HEADER } from "@/lib/limits/peer-address";

beforeAll(() => installPeerAddressStamp());

function headers(peer: string | null, forwardedFor?: string): Headers {
  const h = new Headers();
  if (peer) h.set(PEER_ADDRESS_HEADER, peer);
  if (forwardedFor !== undefined) h.set("x-forwarded-for", forwardedFor);
  return h;
}

describe("clientAddress", () => {
  it("is the socket's peer when no proxy is trusted, whatever X-Forwarded-For says", () => {
    for (const spoof of ["1.1.1.1", "2.2.2.2, 3.3.3.3", "not an address", ""]) {
      expect(clientAddress(headers("203.0.113.7", spoof), 0)).toBe("203.0.113.7");
    }
  });

  it("reads the address the nearest trusted proxy saw, from the right of X-Forwarded-For", () => {
    // The client forged "6.6.6.6"; the one proxy appended the address it saw.
    expect(clientAddress(headers("10.0.0.2", "6.6.6.6, 198.51.100.4"), 1)).toBe("198.51.100.4");
    // Two proxies: the outer one appended the client, the inner one the outer proxy.
    expect(clientAddress(headers("10.0.0.3", "6.6.6.6, 198.51.100.4, 10.0.0.2"), 2)).toBe(
      "198.51.100.4",
    );
  });

  it("stops at the leftmost entry when fewer hops arrived than are trusted", () => {
    expect(clientAddress(headers("10.0.0.2", "198.51.100.4"), 5)).toBe("198.51.100.4");
    expect(clientAddress(headers("10.0.0.2"), 3)).toBe("10.0.0.2");
  });

  it("shares one key among requests whose peer is unknown or unparseable", () => {
    expect(clientAddress(headers(null, "1.1.1.1"), 0)).toBe(UNKNOWN_CLIENT);
    expect(clientAddress(headers("10.0.0.2", "junk"), 1)).toBe(UNKNOWN_CLIENT);
  });

  it("keys IPv4-mapped IPv6 as IPv4 and IPv6 by its /64", () => {
    expect(normalizeAddress("::ffff:192.0.2.1")).toBe("192.0.2.1");
    expect(normalizeAddress("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(normalizeAddress("2001:db8:1:2:bbbb::9")).toBe(normalizeAddress("2001:db8:1:2::5"));
    expect(normalizeAddress("2001:db8:1:3::1")).not.toBe(normalizeAddress("2001:db8:1:2::1"));
    expect(normalizeAddress("example.com")).toBeNull();
  });
});

describe("the peer-address stamp", () => {
  let url = "";
  const server = createServer((request, response) => {
    response.end(
      JSON.stringify({
        peer: request.headers[PEER_ADDRESS_HEADER],
        client: clientAddress(new Headers(request.headers as Record<string, string>), 0),
      }),
    );
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("replaces a forged peer header with the socket's address", async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(
        url,
        { headers: { [PEER_ADDRESS_HEADER]: "6.6.6.6", "x-forwarded-for": "7.7.7.7" } },
        (res) => {
          let body = "";
          res.on("data", (chunk) => {
            body += chunk;
          });
          res.on("end", () => resolve(body));
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(JSON.parse(answer)).toEqual({ peer: "127.0.0.1", client: "127.0.0.1" });
  });
});
