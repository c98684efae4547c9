import { networkInterfaces } from "node:os";
import { describe, expect, it } from "vitest";
import { classifyAddress, serverAddresses } from "@/lib/ai/tools/address-policy";

describe("classifyAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "shared (CGNAT)"],
    ["100.127.255.255", "shared (CGNAT)"],
    ["0.0.0.0", "unspecified"],
    ["224.0.0.251", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["240.0.0.1", "reserved"],
    ["192.0.0.8", "reserved"],
    ["198.18.0.1", "reserved"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["fc00::1", "private (unique local)"],
    ["fd12:3456::1", "private (unique local)"],
    ["fe80::1%eth0", "link-local"],
    ["febf::1", "link-local"],
    ["fec0::1", "private (site-local)"],
    ["ff02::1", "multicast"],
    ["100::1", "discard-only"],
    // IPv4-mapped (::ffff:0:0/96): judged by the IPv4 address inside.
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:a9fe:a9fe", "link-local"],
    ["::ffff:10.0.0.1", "private"],
    // The well-known NAT64 prefix, judged by the address inside; the local-use one refused.
    ["64:ff9b::192.168.0.1", "private"],
    ["64:ff9b::7f00:1", "loopback"],
    ["64:ff9b:1::808:808", "local NAT64"],
    ["64:ff9b:1:ffff::1", "local NAT64"],
    // Translated and tunnelled forms carry an IPv4 address a relay routes to.
    ["::ffff:0:7f00:1", "IPv4-translated"],
    ["2001::1", "Teredo tunnel"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo tunnel"],
    ["2002:7f00:1::", "6to4 tunnel"],
    ["2002:808:808::1", "6to4 tunnel"],
    ["2001:db8::1", "reserved"],
    // Deprecated IPv4-compatible (::/96) and anything else outside 2000::/3.
    ["::7f00:1", "non-global IPv6"],
    ["::127.0.0.1", "loopback"],
    ["4000::1", "non-global IPv6"],
    ["not-an-ip", "invalid"],
    ["", "invalid"],
  ])("refuses %s as %s", (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it.each([
    "93.184.215.14",
    "8.8.8.8",
    "172.32.0.1",
    "100.128.0.1",
    "169.255.0.1",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "[2a00:1450:4001:80b::200e]",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
  ])("allows the public address %s", (address) => {
    expect(classifyAddress(address)).toBeNull();
  });

  it("refuses a public address of this server's own interfaces, however it is written", () => {
    // As if 8.8.8.8 and 2001:4860:4860::8888 were this machine's public addresses.
    const own = new Set(["8.8.8.8", "2001:4860:4860:0:0:0:0:8888"]);
    expect(classifyAddress("8.8.8.8", own)).toBe("server-local");
    expect(classifyAddress("::ffff:8.8.8.8", own)).toBe("server-local");
    expect(classifyAddress("64:ff9b::808:808", own)).toBe("server-local");
    expect(classifyAddress("[2001:4860:4860::8888]", own)).toBe("server-local");
    expect(classifyAddress("8.8.4.4", own)).toBeNull();
  });

  it("knows every address of this machine's interfaces", () => {
    const own = serverAddresses();
    expect(own.has("127.0.0.1")).toBe(true);
    const listed = Object.values(networkInterfaces()).flatMap((entries) => entries ?? []);
    for (const { family, address } of listed.filter((entry) => entry.family === "IPv4"))
      expect(own.has(address), `${family} ${address}`).toBe(true);
  });
});
