import { describe, expect, it } from "vitest"
import { Schema } from "effect"
import { hostedLine } from "../../src/channels/hostedLine.js"
import { HostAgentsBody, hostLines, hostProblems, type HostView } from "../../src/cli/hostStatusFormat.js"

const running: HostView = {
  home: "/srv/host",
  running: true,
  address: "http://127.0.0.1:4000",
  host: { pid: 42, startedAt: "2026-01-02T03:04:05.000Z", uptimeMs: 185_000, agents: { total: 2, live: 1, waking: 0, passive: 1 }, rssBytes: 64 * 1024 * 1024 },
  agents: [{ name: "alpha", state: "live" }, { name: "beta-long", state: "passive", problem: "its folder is held by pid 7 (kern start)\u001b[2J" }]
}

describe("kern status --host, as text", () => {
  it("says where the host runs, since when, its memory and each agent's state; problems named by agent, controls shown", () => {
    const lines = hostLines(running)
    expect(lines).toEqual([
      "home:      /srv/host",
      "running:   pid 42 since 2026-01-02T03:04:05.000Z, up 3 min",
      "address:   http://127.0.0.1:4000 (each agent under /agents/<name>/)",
      "memory:    64.0 MiB RSS",
      "agents:    2 agents: 1 live, 0 waking, 1 passive",
      "  alpha      live",
      "  beta-long  passive",
      expect.stringMatching(/^problems:\n  - beta-long: its folder is held by pid 7 \(kern start\)/)
    ])
    expect(lines.join("\n")).not.toContain("\u001b")
    expect(hostProblems(running)).toHaveLength(1)
  })

  it("a host that does not run is said so, with no problem", () => {
    const stopped: HostView = { home: "/srv/host", running: false }
    expect(hostLines(stopped)).toEqual(["home:      /srv/host", "running:   no (no kern serve runs from this home)"])
    expect(hostProblems(stopped)).toEqual([])
  })
})

describe("kern status DIR of a hosted agent", () => {
  it("names the host, the agent's address on it and its state", () => {
    const host = { pid: 42, address: "http://127.0.0.1:4000", since: "2026-01-02T03:04:05.000Z" }
    expect(hostedLine({ name: "alpha", home: "/srv/host", host, state: "live", problem: null })).toBe(
      "as alpha by kern serve pid 42 at http://127.0.0.1:4000/agents/alpha/ (home /srv/host): live"
    )
    expect(hostedLine({ name: "alpha", home: "/srv/host", host, state: "passive", problem: null })).toMatch(/: passive \(asleep/)
    expect(hostedLine({ name: "alpha", home: "/srv/host", host, state: "passivating", problem: null })).toMatch(/: passivating \(going to sleep/)
    expect(hostedLine({ name: "alpha", home: "/srv/host", host, state: null, problem: null })).toMatch(/state unknown/)
    expect(hostedLine({ name: "alpha", home: "/srv/host", host: null, state: null, problem: null })).toBe(
      "as alpha by the kern serve of /srv/host, which is not running (it wakes the agent once it runs)"
    )
  })
})

describe("GET /agents as kern status reads it", () => {
  it("takes every state the host gives, passivating included, and refuses one it does not know", () => {
    const decode = Schema.decodeUnknownEither(HostAgentsBody)
    const states = ["passive", "waking", "live", "passivating"] as const
    const body = decode({ agents: states.map((state, i) => ({ name: `a${i}`, state })) })
    expect(body._tag === "Right" ? body.right.agents.map((a) => a.state) : body.left.message).toEqual(states)
    expect(decode({ agents: [{ name: "a", state: "exploded" }] })._tag).toBe("Left")
  })
})
