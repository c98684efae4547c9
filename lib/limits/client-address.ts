/**
 * Which client a request comes from, for rate limits: the socket's peer, or — when TRUST_PROXY
 * says N proxies stand in front of Fold — the address the Nth proxy saw, read from the right
 * end of X-Forwarded-For, where a client cannot write. Entries further left are the client's
 * own words and never believed.
 */
import ipaddr from "ipaddr.js";
import { PEER_ADDRESS_HEADER, peerAddressStamped } from "./peer-address";

/** IPv6 clients get a /64 each; keying on the full address would let one rotate through it. */
const IPV6_PREFIX_BITS = 64;
/** Requests whose peer is unknown share this key (in-process calls, or an unstamped server). */
export const UNKNOWN_CLIENT = "unknown";

/** The rate-limit key of a request's client. */
export function clientAddress(headers: Headers, trustProxyHops: number): string {
  const peer = peerAddressStamped() ? headers.get(PEER_ADDRESS_HEADER) : null;
  if (!peer) return UNKNOWN_CLIENT;
  const forwarded = (headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  // Nearest first: the peer, then what each trusted proxy appended, right to left.
  const chain = [peer, ...forwarded.reverse()];
  const hop = chain[Math.min(trustProxyHops, chain.length - 1)] ?? peer;
  return normalizeAddress(hop) ?? UNKNOWN_CLIENT;
}

/** IPv4-mapped IPv6 as IPv4, IPv6 cut to its /64; null for something that is no address. */
export function normalizeAddress(raw: string): string | null {
  if (!ipaddr.isValid(raw)) return null;
  const address = ipaddr.process(raw);
  if (address.kind() === "ipv4") return address.toString();
  // Eight 16-bit groups, uncompressed: the first four are the /64.
  const groups = address
    .toNormalizedString()
    .split(":")
    .slice(0, IPV6_PREFIX_BITS / 16);
  return `${groups.join(":")}::/${IPV6_PREFIX_BITS}`;
}
