import { networkInterfaces } from "node:os";
import ipaddr from "ipaddr.js";

/**
 * Which IP addresses a server-side fetch may connect to. `fetch_url` runs on the Fold
 * server, so a URL that resolves to loopback, a private network or a cloud metadata
 * endpoint (169.254.169.254) would let a prompt reach things only the server can see
 * (SSRF). The ranges are ipaddr.js's maintained list of special-purpose blocks; anything
 * but public unicast is refused, and IPv6 forms that tunnel or translate to an IPv4
 * address are refused unless that address can be read and is itself public. So is a public
 * address of the Fold server's own interfaces: connecting to it reaches the services listening
 * there (its database, its cache) as loopback would, past any firewall in front of the host.
 */

/** Words for ipaddr.js range names in a refusal; a name missing here is shown as it is. */
const RANGE_WORDS: Record<string, string> = {
  unspecified: "unspecified",
  broadcast: "broadcast",
  multicast: "multicast",
  linkLocal: "link-local",
  loopback: "loopback",
  carrierGradeNat: "shared (CGNAT)",
  private: "private",
  uniqueLocal: "private (unique local)",
  deprecatedSiteLocal: "private (site-local)",
  reserved: "reserved",
  as112: "reserved (AS112)",
  as112v6: "reserved (AS112)",
  amt: "reserved (AMT)",
  benchmarking: "benchmarking",
  discard: "discard-only",
  rfc6145: "IPv4-translated",
  rfc6052: "local NAT64",
  "6to4": "6to4 tunnel",
  teredo: "Teredo tunnel",
  deprecatedOrchid: "ORCHID",
  orchid2: "ORCHID",
  droneRemoteIdProtocolEntityTags: "reserved (drone ID)",
  segmentRouting: "segment-routing",
  notGlobal: "non-global IPv6",
};

/** Where IPv6 global unicast lives today; the rest of the space is reserved or special. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");
/**
 * The well-known NAT64 prefix: a DNS64 resolver hands it out for every IPv4-only host on an
 * IPv6-only network, with the IPv4 address in the last 32 bits, so it is judged by that address.
 * The local-use prefix 64:ff9b:1::/48 puts it wherever the operator chose, so it is refused.
 */
const WELL_KNOWN_NAT64 = ipaddr.parseCIDR("64:ff9b::/96");

function classifyV4(address: ipaddr.IPv4): string | null {
  const range = address.range();
  return range === "unicast" ? null : (RANGE_WORDS[range] ?? range);
}

function classifyV6(address: ipaddr.IPv6): string | null {
  const inner = carried(address);
  if (inner.kind() === "ipv4") return classifyV4(inner as ipaddr.IPv4);
  const range = address.range();
  if (range !== "unicast") return RANGE_WORDS[range] ?? range;
  return address.match(GLOBAL_UNICAST_V6) ? null : (RANGE_WORDS.notGlobal ?? "reserved");
}

/** What an IPv6 form that carries an IPv4 address (mapped, well-known NAT64) stands for. */
function carried(address: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  if (address.kind() === "ipv4") return address;
  const v6 = address as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address();
  if (v6.match(WELL_KNOWN_NAT64)) return new ipaddr.IPv4(v6.toByteArray().slice(12));
  return v6;
}

/** One spelling per address, for comparing addresses written differently. */
function canonical(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  const inner = carried(address);
  return inner.kind() === "ipv4" ? inner.toString() : (inner as ipaddr.IPv6).toNormalizedString();
}

/** The addresses of this machine's network interfaces, in canonical form. */
export function serverAddresses(): ReadonlySet<string> {
  const found = new Set<string>();
  for (const entries of Object.values(networkInterfaces())) {
    for (const { address } of entries ?? []) {
      const bare = address.split("%")[0] ?? address;
      if (ipaddr.isValid(bare)) found.add(canonical(ipaddr.parse(bare)));
    }
  }
  return found;
}

/**
 * Why an address must not be fetched (a few words, e.g. "loopback"), or null when it is a
 * public unicast address that is not one of `own` (this server's, by default). Accepts IPv4
 * and IPv6, with or without brackets or a zone id.
 */
export function classifyAddress(
  address: string,
  own: ReadonlySet<string> = serverAddresses(),
): string | null {
  const bare = address.replace(/^\[(.*)\]$/, "$1");
  if (!ipaddr.isValid(bare)) return "invalid";
  const parsed = ipaddr.parse(bare);
  const kind =
    parsed.kind() === "ipv4"
      ? classifyV4(parsed as ipaddr.IPv4)
      : classifyV6(parsed as ipaddr.IPv6);
  if (kind !== null) return kind;
  return own.has(canonical(parsed)) ? "server-local" : null;
}
