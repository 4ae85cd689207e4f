import { describe, expect, it } from "@effect/vitest"
import { chunks, importsOf, loadedWithout } from "../support/chunks.js"

// @effect/cluster (with @effect/rpc and @effect/workflow beneath it) adds 120-370 ms to a cold start. Only a process
// that runs the agent builds the conversations (Conversations.layerDurable), and that is where the build loads it: a
// lazy chunk; and `kern serve` as a runner among several (host.json's `cluster`: src/host/hostCluster.ts), another.
// These checks read the test build the CLI tests run.

// Context tag keys are strings, so they survive minification.
const markers = ["@effect/cluster/Sharding", "@effect/cluster/MessageStorage"]
const clusterModule = (file: string) => /^(ConversationsLive|hostCluster)-/.test(file)
const holdsCluster = (file: string) => markers.some((marker) => importsOf(file).source.includes(marker))

describe("the built kern loads @effect/cluster only in a process that runs the agent", () => {
  it("`kern --help` loads no chunk of the cluster", () => {
    // What main.js imports statically is what every `kern` process loads; commands are lazy chunks.
    for (const file of loadedWithout("main.js", () => true)) expect(holdsCluster(file), file).toBe(false)
  })

  it("the read-only commands load no chunk of the cluster, whatever they import", () => {
    const readOnly = chunks().filter((file) => /^(status|daemon|recall|context|sessions)-/.test(file))
    expect(readOnly.some((file) => file.startsWith("status-"))).toBe(true)
    for (const command of readOnly) {
      for (const file of loadedWithout(command, clusterModule)) expect(holdsCluster(file), `${command} loads ${file}`).toBe(false)
    }
  })

  it("the cluster is in the build, and reached only through the lazy conversations and runner modules", () => {
    const holders = chunks().filter(holdsCluster)
    expect(holders.length).toBeGreaterThan(0)
    const lazy = chunks().filter(clusterModule)
    expect(lazy.map((file) => file.split("-")[0]).sort()).toEqual(["ConversationsLive", "hostCluster"])
    const reachable = new Set(lazy.flatMap((module) => [...loadedWithout(module, () => false)]))
    for (const file of holders) expect(reachable.has(file), file).toBe(true)
    // No other command reaches the cluster by any other path. The two that run agents, `kern run`/`start` and `kern
    // serve`, build the conversations at once anyway; esbuild has their chunks import the cluster's chunk (shared by the
    // two lazy modules) for its evaluation order, with no binding from it.
    const runsAgents = (file: string) => clusterModule(file) || /^(run|serve)-/.test(file)
    expect(chunks().filter((file) => /^(run|serve)-/.test(file))).toHaveLength(2)
    for (const file of loadedWithout("main.js", runsAgents)) expect(holdsCluster(file), file).toBe(false)
  })
})
