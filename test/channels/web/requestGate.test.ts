import { describe, expect, it } from "@effect/vitest"
import * as NodeOs from "node:os"
import { headerValues, hostNames, hostRefusal, targetProblem } from "../../../src/channels/web/requestGate.js"

describe("request targets", () => {
  it("canonical targets pass, whatever their query says", () => {
    for (const target of ["/", "/health", "/sessions/20200101-000000-000-abcd/activity", "/assets/app-1.2.js", "/history?session=a/../b;c", "/recall/search?q=%2e%2e%2f&limit=5", "/x%20y", "/auth?ticket=abc"]) {
      expect(targetProblem(target), target).toBeUndefined()
    }
  })

  it("every non-canonical spelling says what was wrong", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["/history;/../health", ";"],
      ["/./history", ". or .."],
      ["/health/../history", ". or .."],
      ["//history", "empty segment"],
      ["/history/", "empty segment"],
      ["/%2e%2e/history", "percent-encode"],
      ["/history%2F", "percent-encode"],
      ["/history%5c", "percent-encode"],
      ["/%68istory", "percent-encode"],
      ["/history%00", "percent-encode"],
      ["/health\\..\\history", "backslash"],
      ["/history#x", "fragment"],
      ["http://127.0.0.1/history", "starting with /"],
      ["*", "starting with /"],
      ["", "starting with /"]
    ]
    for (const [target, reason] of cases) expect(targetProblem(target), target).toContain(reason)
  })
})

describe("Host names", () => {
  it("the configured host is accepted beside the loopback names; any other name is 421", () => {
    const named = hostNames("Kern.LAN")
    for (const value of ["kern.lan", "kern.lan:4100", "KERN.lan:4100", "127.0.0.1:4100", "localhost", "[::1]:4100"]) {
      expect(hostRefusal(named, [value]), value).toBeUndefined()
    }
    expect(hostRefusal(named, ["kern.lan.evil.example"])?.status).toBe(421)
    const address = hostNames("192.168.1.5")
    expect(hostRefusal(address, ["192.168.1.5:4100"])).toBeUndefined()
    expect(hostRefusal(address, ["192.168.1.6:4100"])?.status).toBe(421)
    expect(hostRefusal(hostNames("::1"), ["[::1]:4100"])).toBeUndefined()
  })

  it("a wildcard bind answers to the machine's own addresses, not to names", () => {
    const wildcard = hostNames("0.0.0.0")
    for (const addresses of Object.values(NodeOs.networkInterfaces())) {
      for (const { address, family } of addresses ?? []) {
        const value = family === "IPv6" ? `[${address}]:4100` : `${address}:4100`
        expect(hostRefusal(wildcard, [value]), value).toBeUndefined()
      }
    }
    expect(hostRefusal(wildcard, ["evil.example"])?.status).toBe(421)
  })

  it("Node's raw header list gives every Host sent; not exactly one is 400", () => {
    const raw = ["Host", "127.0.0.1", "Accept", "*/*", "host", "evil.example"]
    expect(headerValues(raw, "host")).toEqual(["127.0.0.1", "evil.example"])
    expect(hostRefusal(hostNames("127.0.0.1"), headerValues(raw, "host"))?.status).toBe(400)
    expect(hostRefusal(hostNames("127.0.0.1"), [])?.status).toBe(400)
    expect(hostRefusal(hostNames("127.0.0.1"), [""])?.status).toBe(400)
  })
})
