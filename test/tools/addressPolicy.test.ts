import { assert, describe, it } from "@effect/vitest"
import { type AddressClass, classifyAddress, isAllowedAddress, refusal } from "../../src/tools/addressPolicy.js"

/**
 * The address corpus: every form an address can take to reach this host, its network, a metadata service or
 * nowhere routable, and public addresses that must stay reachable. Default deny: only "public" connects, and
 * "private" only where the workspace allows private hosts.
 */
const corpus: ReadonlyArray<readonly [string, AddressClass, string]> = [
  // IPv4
  ["8.8.8.8", "public", "public DNS"],
  ["1.1.1.1", "public", "public DNS"],
  ["93.184.216.34", "public", "a public web host"],
  ["172.32.0.1", "public", "just past 172.16/12"],
  ["127.0.0.1", "private", "loopback"],
  ["127.255.0.9", "private", "loopback /8"],
  ["0.0.0.0", "private", "unspecified: connects to this host"],
  ["10.1.2.3", "private", "RFC 1918"],
  ["172.16.0.1", "private", "RFC 1918"],
  ["192.168.1.1", "private", "RFC 1918"],
  ["100.64.0.1", "private", "carrier-grade NAT"],
  ["169.254.169.254", "metadata", "cloud metadata"],
  ["169.254.1.1", "metadata", "link-local"],
  ["100.100.100.200", "metadata", "Alibaba metadata"],
  ["224.0.0.1", "reserved", "multicast"],
  ["239.255.255.250", "reserved", "multicast (SSDP)"],
  ["255.255.255.255", "reserved", "broadcast"],
  ["192.0.2.1", "reserved", "documentation (TEST-NET-1)"],
  ["198.51.100.7", "reserved", "documentation (TEST-NET-2)"],
  ["203.0.113.9", "reserved", "documentation (TEST-NET-3)"],
  ["198.18.0.1", "reserved", "benchmarking"],
  ["240.0.0.1", "reserved", "reserved class E"],
  // IPv6, plain
  ["2606:4700:4700::1111", "public", "public DNS"],
  ["2001:4860:4860::8888", "public", "public DNS"],
  ["2a00:1450:4001:830::200e", "public", "a public web host"],
  ["::1", "private", "loopback"],
  ["::", "private", "unspecified: connects to this host"],
  ["fc00::1", "private", "unique-local"],
  ["fd12:3456:789a::1", "private", "unique-local"],
  ["fec0::1", "private", "site-local (deprecated)"],
  ["fe80::1", "metadata", "link-local"],
  ["fe80::1%eth0", "metadata", "link-local with a zone"],
  ["febf:ffff::1", "metadata", "link-local, top of fe80::/10"],
  ["fd00:ec2::254", "metadata", "AWS metadata"],
  ["ff02::1", "reserved", "multicast"],
  ["2001:db8::1", "reserved", "documentation"],
  ["100::1", "reserved", "discard-only"],
  ["4000::1", "reserved", "outside global unicast 2000::/3"],
  // IPv6 carrying an IPv4 address: judged by what it reaches
  ["::ffff:127.0.0.1", "private", "IPv4-mapped loopback"],
  ["::ffff:7f00:1", "private", "IPv4-mapped loopback, hex"],
  ["::ffff:169.254.169.254", "metadata", "IPv4-mapped metadata"],
  ["::ffff:10.0.0.1", "private", "IPv4-mapped RFC 1918"],
  ["::ffff:8.8.8.8", "public", "IPv4-mapped public"],
  ["::127.0.0.1", "private", "IPv4-compatible loopback"],
  ["::7f00:1", "private", "IPv4-compatible loopback, hex"],
  ["::169.254.169.254", "metadata", "IPv4-compatible metadata"],
  ["::8.8.8.8", "reserved", "IPv4-compatible (deprecated) public"],
  ["::ffff:0:127.0.0.1", "private", "IPv4-translated (RFC 6145) loopback"],
  ["2002:7f00:1::", "private", "6to4 of loopback"],
  ["2002:a9fe:a9fe::1", "metadata", "6to4 of the metadata address"],
  ["2002:c0a8:101::1", "private", "6to4 of 192.168.1.1"],
  ["2002:808:808::1", "reserved", "6to4 (deprecated) of a public address"],
  ["64:ff9b::7f00:1", "private", "NAT64 of loopback"],
  ["64:ff9b::169.254.169.254", "metadata", "NAT64 of the metadata address"],
  ["64:ff9b::8.8.8.8", "public", "NAT64 of a public address (DNS64 on IPv6-only networks)"],
  ["64:ff9b:1::a00:1", "private", "local-use NAT64"],
  ["2001:0:4136:e378:8000:63bf:80ff:fffe", "private", "Teredo, client 127.0.0.1"],
  ["2001:0:a9fe:a9fe:8000:63bf:3fff:fdd2", "metadata", "Teredo, server 169.254.169.254"],
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved", "Teredo (RFC 4380 example), client in TEST-NET-1"],
  ["2001:0:4136:e378:8000:63bf:f7f7:f7f7", "reserved", "Teredo of public addresses (deprecated tunnel)"],
  // Not an address
  ["not-an-ip", "reserved", "a name"],
  ["1.2.3", "reserved", "a short form"],
  ["", "reserved", "empty"]
]

describe("address policy corpus", () => {
  for (const [ip, expected, what] of corpus) {
    it(`${ip || "(empty)"} (${what}) is ${expected}`, () => {
      assert.strictEqual(classifyAddress(ip), expected)
      assert.strictEqual(isAllowedAddress(ip, false), expected === "public", "private hosts not allowed")
      assert.strictEqual(isAllowedAddress(ip, true), expected === "public" || expected === "private", "private hosts allowed")
    })
  }

  it("one refused answer refuses the name, and the message says which address and why", () => {
    assert.isUndefined(refusal("example.com", ["93.184.216.34", "2606:2800:220:1::"], false))
    assert.strictEqual(
      refusal("evil.example", ["93.184.216.34", "2002:a9fe:a9fe::1"], true),
      "refusing to fetch evil.example: it resolves to a link-local or metadata address (2002:a9fe:a9fe::1); " +
        "webfetch only reaches public hosts"
    )
    assert.include(refusal("doc.example", ["2001:db8::1"], true), "a reserved or non-routable address (2001:db8::1)")
    assert.include(refusal("nowhere.example", [], true), "it resolves to no address")
  })
})
