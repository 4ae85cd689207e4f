import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { parseHostConfig } from "../../src/host/HostConfig.js"

// host.json's keys for a runner among several: `database` and `cluster`, checked with errors naming the key.

const parse = (json: unknown) => parseHostConfig(JSON.stringify(json), "/srv")
const problem = (json: unknown) => Either.match(parse(json), { onLeft: (error) => error.message, onRight: () => "decoded" })

describe("host.json for runners sharing agents", () => {
  it("database and cluster together make the host one runner among several", () => {
    const settings = Either.getOrThrow(parse({
      agents: { alpha: "alpha" },
      database: { url: "postgres://kern:${PGPASSWORD}@db:5432/kern" },
      cluster: { host: "10.0.0.5", port: 34431, lockExpirationSeconds: 10 }
    }))
    expect(settings.cluster).toEqual({
      database: { url: "postgres://kern:${PGPASSWORD}@db:5432/kern" },
      runner: { host: "10.0.0.5", port: 34431, lockExpirationSeconds: 10 }
    })
    expect(Either.getOrThrow(parse({ agents: {} })).cluster).toBeUndefined()
  })

  it("refuses one without the other, and names the key that is wrong", () => {
    expect(problem({ agents: {}, cluster: { host: "10.0.0.5", port: 34431 } })).toContain("cluster: needs database { url }")
    expect(problem({ agents: {}, database: { url: "postgres://db/kern" } })).toContain("database: is for runners sharing agents")
    const database = { url: "postgres://db/kern" }
    expect(problem({ agents: {}, database, cluster: { host: "10.0.0.5", port: 70000 } })).toContain("cluster.port")
    expect(problem({ agents: {}, database, cluster: { host: "0.0.0.0", port: 34431 } })).toContain("no address another runner can reach")
    expect(problem({ agents: {}, database, cluster: { host: "10.0.0.5", port: 1, lockExpirationSeconds: 1 } })).toContain("cluster.lockExpirationSeconds")
    expect(problem({ agents: {}, database: { url: "mysql://db/kern" }, cluster: { host: "10.0.0.5", port: 1 } })).toContain("database.url")
    expect(problem({ agents: {}, database, cluster: { host: "10.0.0.5", port: 1, shard: 3 } })).toContain("cluster")
  })

  it("a wrong host.json names each wrong key, what it takes and what was there, in words, once", () => {
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [[], `host.json: expected a JSON object with "agents", found []`],
      [{}, `agents: expected an object naming each agent's folder, { "<name>": "<folder>" } or { "<name>": { "dir": "<folder>" } }, found nothing`],
      [{ agents: [{ name: "x" }] }, `agents: expected an object naming each agent's folder, { "<name>": "<folder>" } or { "<name>": { "dir": "<folder>" } }, found [{"name":"x"}]`],
      [{ agents: { a: 3 } }, `agents.a: expected its folder, "<folder>" or { "dir": "<folder>" }, found 3`],
      [{ agents: { a: { dir: "x", extra: 1 } } }, `agents.a: expected its folder, "<folder>" or { "dir": "<folder>" }, found {"dir":"x","extra":1}`],
      [{ agents: {}, port: "abc" }, `port: expected an integer port from 0 to 65535 (0 takes a free one), found "abc"`],
      [{ agents: {}, port: 70000 }, `port: expected an integer port from 0 to 65535 (0 takes a free one), found 70000`],
      [{ agents: {}, idleSecond: 5 }, `idleSecond: not a key of host.json (its keys: agents, host, port, idleSeconds, database, cluster)`],
      [{ agents: {}, idleSeconds: -1 }, `idleSeconds: expected seconds, 0 or more (0 never passivates), found -1`],
      [{ agents: {}, host: "" }, `host: expected the address to listen on, e.g. "127.0.0.1", found ""`]
    ]
    for (const [json, message] of cases) expect(problem(json)).toBe(message)
    // Two wrong keys: both named.
    expect(problem({ agents: {}, port: -1, idleSeconds: "x" })).toBe(
      `port: expected an integer port from 0 to 65535 (0 takes a free one), found -1; idleSeconds: expected seconds, 0 or more (0 never passivates), found "x"`
    )
    // A runner's key is named at its own depth, not also as the optional key above it.
    const runner = problem({ agents: {}, database: { url: "postgres://db/kern" }, cluster: { host: "10.0.0.5", port: "x" } })
    expect(runner).toMatch(/^cluster\.port: /)
    expect(runner).not.toContain("Expected undefined")
  })
})
