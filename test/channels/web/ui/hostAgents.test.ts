import { describe, expect, it } from "@effect/vitest"
import { decodeHostedAgents, hostedName, openAction } from "../../../../src/channels/web/ui/host/hostAgents.js"

describe("the host page's and the picker's view of the hosted agents", () => {
  it("a page is a hosted agent's only at /agents/<name>/: under kern start (/) there is no picker", () => {
    expect(hostedName("/agents/alpha/")).toBe("alpha")
    expect(hostedName("/agents/a-1/")).toBe("a-1")
    expect(hostedName("/")).toBeUndefined()
    expect(hostedName("/index.html")).toBeUndefined()
    expect(hostedName("/agents/alpha")).toBeUndefined()
    expect(hostedName("/agents/Alpha/")).toBeUndefined()
    expect(hostedName("/agents/alpha/x/")).toBeUndefined()
    expect(hostedName("/x/agents/alpha/")).toBeUndefined()
  })

  it("decodes the list; an entry that is not one is left out; a problem stays the text it was", () => {
    const problem = "<img src=x onerror=\"window.pwned=1\"> is not an agent folder"
    expect(decodeHostedAgents({
      agents: [
        { name: "alpha", state: "live" },
        { name: "bad", state: "passive", problem },
        { name: "closing", state: "passivating" },
        { name: "odd", state: "exploded" },
        { state: "live" },
        "beta"
      ]
    })).toEqual([
      { name: "alpha", state: "live", problem: undefined },
      { name: "bad", state: "passive", problem },
      { name: "closing", state: "passivating", problem: undefined }
    ])
    expect(decodeHostedAgents({ error: "not logged in" })).toBeUndefined()
    expect(decodeHostedAgents(undefined)).toBeUndefined()
  })

  it("the hand-over is posted to the host, from the host page and from an agent's page alike", () => {
    expect(openAction("host", "alpha")).toBe("host/open/alpha")
    expect(openAction("agent", "beta")).toBe("../../host/open/beta")
  })
})
