import ipaddr from "ipaddr.js"
import * as NodeNet from "node:net"

/**
 * Which addresses webfetch may connect to: pure classification of IP literals (seed 004, SSRF guard). Ranges come
 * from ipaddr.js; an IPv6 address that carries an IPv4 one is judged by the IPv4 address it reaches. Default deny:
 * only globally routable unicast is "public".
 */

/**
 * - public: globally routable unicast.
 * - private: loopback, RFC 1918, carrier-grade NAT, unique-local, the unspecified address (it connects to this host);
 *   allowed when the workspace allows private hosts (tests, trusted setups).
 * - metadata: link-local and the cloud metadata endpoints; never allowed.
 * - reserved: multicast, broadcast, documentation, benchmarking, unallocated space, deprecated tunnels to public
 *   hosts, anything that is not an IP; never allowed.
 */
export type AddressClass = "public" | "private" | "metadata" | "reserved"

const severity: Readonly<Record<AddressClass, number>> = { public: 0, private: 1, reserved: 2, metadata: 3 }

const worst = (a: AddressClass, b: AddressClass): AddressClass => (severity[a] >= severity[b] ? a : b)

const v4Classes: Readonly<Record<string, AddressClass>> = {
  unicast: "public",
  loopback: "private",
  private: "private",
  carrierGradeNat: "private",
  unspecified: "private",
  linkLocal: "metadata"
}

/** Alibaba Cloud's metadata service sits in carrier-grade NAT space. */
const v4Metadata = new Set(["100.100.100.200"])

const classifyV4 = (address: ipaddr.IPv4): AddressClass =>
  v4Metadata.has(address.toString()) ? "metadata" : v4Classes[address.range()] ?? "reserved"

const v4At = (parts: ReadonlyArray<number>, index: number): ipaddr.IPv4 => {
  const high = parts[index] ?? 0
  const low = parts[index + 1] ?? 0
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff])
}

/** An IPv4 address inside a deprecated tunnel (6to4, Teredo): refused even when public, with its class otherwise. */
const tunnelled = (inner: AddressClass): AddressClass => (inner === "public" ? "reserved" : inner)

const v6Classes: Readonly<Record<string, AddressClass>> = {
  loopback: "private",
  unspecified: "private",
  uniqueLocal: "private",
  deprecatedSiteLocal: "private",
  linkLocal: "metadata"
}

/** AWS's IPv6 metadata endpoint is unique-local space. */
const v6Metadata = new Set(["fd00:ec2::254"])

const globalUnicast = ipaddr.IPv6.parseCIDR("2000::/3")
const nat64LocalUse = ipaddr.IPv6.parseCIDR("64:ff9b:1::/48")

const classifyV6 = (address: ipaddr.IPv6): AddressClass => {
  const parts = address.parts
  if (v6Metadata.has(address.toRFC5952String())) return "metadata"
  const range = address.range()
  switch (range) {
    // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (translated) reach a.b.c.d.
    case "ipv4Mapped":
    case "rfc6145":
      return classifyV4(v4At(parts, 6))
    case "rfc6052":
      // 64:ff9b::/96 is the well-known NAT64 prefix (DNS64 answers for every IPv4 host on an IPv6-only network);
      // 64:ff9b:1::/48 is a local network's own translator.
      return address.match(nat64LocalUse) ? "private" : classifyV4(v4At(parts, 6))
    case "6to4":
      return tunnelled(classifyV4(v4At(parts, 1)))
    case "teredo": {
      // 2001:0:<server v4>:<flags>:<port>:<client v4 with every bit inverted>.
      const client = new ipaddr.IPv4(v4At(parts, 6).octets.map((octet) => octet ^ 0xff))
      return tunnelled(worst(classifyV4(v4At(parts, 2)), classifyV4(client)))
    }
    case "unicast":
      if (address.match(globalUnicast)) return "public"
      // ::a.b.c.d (IPv4-compatible, deprecated): judged by the IPv4 address, refused when that one is public.
      if (parts.slice(0, 6).every((part) => part === 0)) return tunnelled(classifyV4(v4At(parts, 6)))
      return "reserved"
    default:
      return v6Classes[range] ?? "reserved"
  }
}

/**
 * Parses an IPv6 literal through the WHATWG URL parser first: it reads `::a.b.c.d` as the IPv4-compatible address it
 * is, where ipaddr.js would take it for an IPv4-mapped one. A zone id (`%eth0`) only exists on link-local addresses
 * and does not change the class.
 */
const parseV6 = (ip: string): ipaddr.IPv6 | undefined => {
  const [bare = ""] = ip.split("%")
  const canonical = URL.canParse(`http://[${bare}]/`) ? new URL(`http://[${bare}]/`).hostname.slice(1, -1) : undefined
  return canonical !== undefined && ipaddr.IPv6.isValid(canonical) ? ipaddr.IPv6.parse(canonical) : undefined
}

/** Classifies an IP literal; anything that is not one is reserved (never connected to blindly). */
export const classifyAddress = (ip: string): AddressClass => {
  const version = NodeNet.isIP(ip)
  if (version === 4) return classifyV4(ipaddr.IPv4.parse(ip))
  const v6 = version === 6 ? parseV6(ip) : undefined
  return v6 === undefined ? "reserved" : classifyV6(v6)
}

/** Loopback and private ranges may be allowed (tests, trusted setups); the other non-public classes never are. */
export const isAllowedAddress = (ip: string, allowPrivateHosts: boolean): boolean => {
  const kind = classifyAddress(ip)
  return kind === "public" || (kind === "private" && allowPrivateHosts)
}

const described: Readonly<Record<AddressClass, string>> = {
  public: "a public",
  private: "a loopback or private",
  metadata: "a link-local or metadata",
  reserved: "a reserved or non-routable"
}

/**
 * Why webfetch refuses a host that resolved to `addresses`, or undefined when it may connect: no address at all,
 * or any address it may not reach (one bad answer is enough to refuse the name).
 */
export const refusal = (
  host: string,
  addresses: ReadonlyArray<string>,
  allowPrivateHosts: boolean
): string | undefined => {
  const refused = addresses.find((address) => !isAllowedAddress(address, allowPrivateHosts))
  if (addresses.length > 0 && refused === undefined) return undefined
  const kind = refused === undefined ? "no" : described[classifyAddress(refused)]
  return `refusing to fetch ${host}: it resolves to ${kind} address${refused === undefined ? "" : ` (${refused})`}; ` +
    `webfetch only reaches public hosts`
}
