import * as NodeNet from "node:net"

/** Which addresses webfetch may connect to: pure classification of IP literals (seed 004, SSRF guard). */

export type AddressClass = "public" | "private" | "metadata"

const v4ToNumber = (ip: string): number =>
  ip.split(".").reduce((acc, part) => acc * 256 + Number(part), 0)

// Plain numbers, not int32 bit operations, so addresses from 128.0.0.0 up stay positive.
const inV4 = (ip: number, base: string, bits: number): boolean =>
  Math.floor(ip / 2 ** (32 - bits)) === Math.floor(v4ToNumber(base) / 2 ** (32 - bits))

const classifyV4 = (ip: string): AddressClass => {
  const n = v4ToNumber(ip)
  if (ip === "100.100.100.200") return "metadata"
  const blocked: ReadonlyArray<readonly [string, number]> = [
    ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
    ["192.0.0.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["224.0.0.0", 4], ["240.0.0.0", 4]
  ]
  if (inV4(n, "169.254.0.0", 16)) return "metadata"
  return blocked.some(([base, bits]) => inV4(n, base, bits)) ? "private" : "public"
}

/** Expands an IPv6 literal to eight 16-bit groups. */
const v6Groups = (ip: string): Array<number> => {
  let text = ip.toLowerCase()
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted?.[1] !== undefined) {
    const n = v4ToNumber(dotted[1])
    text = text.slice(0, -dotted[1].length) + `${Math.floor(n / 65536).toString(16)}:${(n % 65536).toString(16)}`
  }
  const [head = "", tail] = text.split("::")
  const left = head === "" ? [] : head.split(":")
  const right = tail === undefined || tail === "" ? [] : tail.split(":")
  const fill = tail === undefined ? [] : Array.from({ length: 8 - left.length - right.length }, () => "0")
  return [...left, ...fill, ...right].map((group) => parseInt(group, 16) || 0)
}

const classifyV6 = (ip: string): AddressClass => {
  const g = v6Groups(ip)
  const [g0 = 0, , , , , g5 = 0, g6 = 0, g7 = 0] = g
  const v4 = `${Math.floor(g6 / 256)}.${g6 % 256}.${Math.floor(g7 / 256)}.${g7 % 256}`
  // ::ffff:a.b.c.d (mapped) and 64:ff9b::a.b.c.d (NAT64) reach an IPv4 address: judge that one.
  if (g.slice(0, 5).every((x) => x === 0) && g5 === 0xffff) return classifyV4(v4)
  if (g0 === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return classifyV4(v4)
  if (g.every((x) => x === 0)) return "private"
  if (g.slice(0, 7).every((x) => x === 0) && g7 === 1) return "private"
  if (g0 === 0xfd00 && g[1] === 0x0ec2 && g7 === 0x254) return "metadata"
  if ((g0 & 0xffc0) === 0xfe80) return "metadata"
  if ((g0 & 0xfe00) === 0xfc00 || (g0 & 0xff00) === 0xff00 || (g0 & 0xffc0) === 0xfec0) return "private"
  return "public"
}

/** Classifies an IP literal; anything that is not one is treated as private (never connected to blindly). */
export const classifyAddress = (ip: string): AddressClass => {
  const version = NodeNet.isIP(ip)
  return version === 4 ? classifyV4(ip) : version === 6 ? classifyV6(ip) : "private"
}

/** Loopback and private ranges may be allowed (tests, trusted setups); link-local and metadata never are. */
export const isAllowedAddress = (ip: string, allowPrivateHosts: boolean): boolean => {
  const kind = classifyAddress(ip)
  return kind === "public" || (kind === "private" && allowPrivateHosts)
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
  const kind = refused === undefined
    ? "no"
    : classifyAddress(refused) === "metadata"
    ? "a link-local or metadata"
    : "a loopback or private"
  return `refusing to fetch ${host}: it resolves to ${kind} address${refused === undefined ? "" : ` (${refused})`}; ` +
    `webfetch only reaches public hosts`
}
