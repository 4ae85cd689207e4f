import { describe, expect, it } from "@effect/vitest"
import { door } from "../../src/host/hostDoor.js"

describe("kern serve's door", () => {
  it("an agent's route is that agent's, with the prefix taken off once", () => {
    expect(door("/agents/alpha/status")).toEqual({ _tag: "Agent", name: "alpha", target: "/status" })
    expect(door("/agents/alpha/sessions/s1/activity?limit=3")).toEqual({ _tag: "Agent", name: "alpha", target: "/sessions/s1/activity?limit=3" })
    expect(door("/agents/alpha/")).toEqual({ _tag: "Agent", name: "alpha", target: "/" })
    expect(door("/agents/alpha/?x=1")).toEqual({ _tag: "Agent", name: "alpha", target: "/?x=1" })
    expect(door("/agents/alpha")).toEqual({ _tag: "AgentRoot", name: "alpha" })
    expect(door("/agents")).toEqual({ _tag: "Agents" })
    expect(door("/host")).toEqual({ _tag: "Host" })
  })

  it("the host page, its files, its login and its hand-over are the host's", () => {
    expect(door("/")).toEqual({ _tag: "HostPage" })
    expect(door("/assets/host.js")).toEqual({ _tag: "HostAsset", path: "/assets/host.js" })
    expect(door("/host/login")).toEqual({ _tag: "HostLogin" })
    expect(door("/host/logout")).toEqual({ _tag: "HostLogout" })
    expect(door("/host/events")).toEqual({ _tag: "HostEvents" })
    expect(door("/host/open/alpha")).toEqual({ _tag: "HostOpen", name: "alpha" })
    expect(door("/host/open/Alpha")).toEqual({ _tag: "NotFound" })
    expect(door("/host/open/alpha/x")).toEqual({ _tag: "NotFound" })
    expect(door("/host/open/..%2fbeta")._tag).toBe("Refused")
    expect(door("/assets/..%2f..%2fetc/passwd")._tag).toBe("Refused")
  })

  // Each target would reach another agent's route, or read two ways, if the prefix were taken off before the check.
  const refused = [
    "/agents/alpha/..%2f..%2fagents/beta/status",
    "/agents/alpha/..%2Fbeta/status",
    "/agents/alpha/;/../beta/status",
    "/agents/alpha;/../beta/status",
    "/agents/alpha/../beta/status",
    "/agents/alpha/./status",
    "/agents/alpha%2f..%2fbeta/status",
    "/agents/alpha%2Fstatus",
    "/agents/%61lpha/status",
    "/agents//alpha/status",
    "/agents/alpha//status",
    "/agents/alpha/status/",
    "/agents/alpha\\..\\beta/status",
    "/agents/alpha/%2e%2e/beta/status",
    "/agents/alpha/status#x",
    "//agents/alpha/status",
    "agents/alpha/status",
    "/agents/",
    "/agents//"
  ]
  it.each(refused)("refuses %s before any agent sees it", (target) => {
    expect(door(target)._tag).toBe("Refused")
  })

  const unknown = [
    "/agents/A/status", "/agents/Alpha/status", "/agents/-a/status", "/agents/al.pha/status", "/agents/alpha%C3%A9/status", "/status",
    "/host/x", "/agentsx/alpha/status", "/assets", "/host/open", "/index.html"
  ]
  it.each(unknown)("finds no route for %s", (target) => {
    expect(door(target)).toEqual({ _tag: "NotFound" })
  })
})
