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
})
