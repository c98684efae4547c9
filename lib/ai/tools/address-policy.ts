import { isIPv4, isIPv6 } from "node:net";

/**
 * Which IP addresses a server-side fetch may connect to. `fetch_url` runs on
 * the Fold server, so a URL that resolves to loopback, a private network or a
 * cloud metadata endpoint (169.254.169.254) would let a prompt reach things
 * only the server can see (SSRF). Anything not a public unicast address is
 * refused, including IPv6 forms that embed one of those IPv4 addresses.
 */

export type AddressClass =
  | "unspecified"
  | "loopback"
  | "private"
  | "link-local"
  | "shared (CGNAT)"
  | "multicast"
  | "reserved"
  | "invalid";

type Range = readonly [base: readonly number[], prefixBits: number, kind: AddressClass];

const IPV4_RANGES: readonly Range[] = [
  [[0, 0, 0, 0], 8, "unspecified"], // "this network"; 0.0.0.0 reaches localhost on Linux
  [[10, 0, 0, 0], 8, "private"],
  [[100, 64, 0, 0], 10, "shared (CGNAT)"],
  [[127, 0, 0, 0], 8, "loopback"],
  [[169, 254, 0, 0], 16, "link-local"], // includes the cloud metadata endpoint
  [[172, 16, 0, 0], 12, "private"],
  [[192, 0, 0, 0], 24, "reserved"], // IETF protocol assignments
  [[192, 168, 0, 0], 16, "private"],
  [[198, 18, 0, 0], 15, "reserved"], // benchmarking, sometimes used for internal networks
  [[224, 0, 0, 0], 4, "multicast"],
  [[240, 0, 0, 0], 4, "reserved"], // includes broadcast 255.255.255.255
];

const IPV6_RANGES: readonly Range[] = [
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 128, "unspecified"],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 128, "loopback"],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 96, "reserved"], // deprecated IPv4-compatible
  [[0x01, 0x00, 0, 0, 0, 0, 0, 0], 64, "reserved"], // discard-only
  [[0xfc], 7, "private"], // unique local
  [[0xfe, 0x80], 10, "link-local"],
  [[0xfe, 0xc0], 10, "private"], // deprecated site-local
  [[0xff], 8, "multicast"],
];

/** IPv6 prefixes whose last 32 bits (or bits 16..48 for 6to4) are an IPv4 address that gets routed to. */
const IPV4_MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];
const NAT64_PREFIX = [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0];
const SIX_TO_FOUR_PREFIX = [0x20, 0x02];

function inRange(bytes: readonly number[], base: readonly number[], prefixBits: number): boolean {
  for (let bit = 0; bit < prefixBits; bit += 8) {
    const mask = prefixBits - bit >= 8 ? 0xff : (0xff << (8 - (prefixBits - bit))) & 0xff;
    if (((bytes[bit / 8] ?? 0) & mask) !== ((base[bit / 8] ?? 0) & mask)) return false;
  }
  return true;
}

const startsWith = (bytes: readonly number[], prefix: readonly number[]) =>
  prefix.every((byte, i) => bytes[i] === byte);

function parseIPv4(address: string): number[] {
  return address.split(".").map(Number);
}

/** 16 bytes of an IPv6 address in any textual form (`::`, embedded dotted quad, zone id). */
function parseIPv6(address: string): number[] {
  let text = address.replace(/%.*$/, "");
  const tail: number[] = [];
  const dotted = text.match(/:(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted?.[1]) {
    tail.push(...parseIPv4(dotted[1]));
    text = `${text.slice(0, -dotted[1].length)}0:0`;
  }
  const [head = "", rest] = text.split("::");
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const left = groups(head);
  const right = rest === undefined ? [] : groups(rest);
  const zeros = Array<string>(8 - left.length - right.length).fill("0");
  const words = [...left, ...zeros, ...right].map((word) => Number.parseInt(word, 16));
  const bytes = words.flatMap((word) => [word >> 8, word & 0xff]);
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

function classifyIPv4(bytes: readonly number[]): AddressClass | null {
  for (const [base, prefixBits, kind] of IPV4_RANGES)
    if (inRange(bytes, base, prefixBits)) return kind;
  return null;
}

/**
 * Why an address must not be fetched, or null when it is a public unicast
 * address. Accepts IPv4 and IPv6 (with or without brackets).
 */
export function classifyAddress(address: string): AddressClass | null {
  const bare = address.replace(/^\[(.*)\]$/, "$1");
  if (isIPv4(bare)) return classifyIPv4(parseIPv4(bare));
  if (!isIPv6(bare)) return "invalid";

  const bytes = parseIPv6(bare);
  if (startsWith(bytes, IPV4_MAPPED_PREFIX) || startsWith(bytes, NAT64_PREFIX))
    return classifyIPv4(bytes.slice(12));
  if (startsWith(bytes, SIX_TO_FOUR_PREFIX)) return classifyIPv4(bytes.slice(2, 6));
  for (const [base, prefixBits, kind] of IPV6_RANGES)
    if (inRange(bytes, base, prefixBits)) return kind;
  return null;
}
