import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as NodePath from "node:path"
import { testDist } from "../support/build.js"
import { bundleModules, evaluatedWithout, lazilyImported } from "../support/moduleGraph.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

// @effect/cluster (with @effect/rpc and @effect/workflow beneath it) adds 120-370 ms to a cold start. Only a process
// that runs the agent builds the conversations (Conversations.layerDurable), and that is where the build evaluates it:
// a lazily imported module; and `kern serve` as a runner among several (host.json's `cluster`: src/host/hostCluster.ts),
// another. These checks read the module graph of the test build's full CLI (dist/main.cjs), which the CLI tests run.

const modules = bundleModules("main")
const cluster = (path: string) => path.startsWith("node_modules/@effect/cluster/")
/**
 * The ids of the global values (effect's `globalValue`) a node process made by the time it exited: a module of
 * @effect/cluster or @effect/rpc that was evaluated made its own (`@effect/cluster/MessageStorage/noop`, …).
 */
const globalValuesOf = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const report = "process.on('exit', () => process.stderr.write('\\nglobal values: ' + " +
    "JSON.stringify([...(globalThis['effect/GlobalValue'] ?? new Map()).keys()].map(String))))"
  const run = spawnSync(process.execPath, ["--import", `data:text/javascript,${encodeURIComponent(report)}`, ...args], { encoding: "utf8" })
  const said = /\nglobal values: (.*)$/.exec(run.stderr)
  if (said === null) throw new Error(`no report from node ${args.join(" ")}: ${run.stderr}`)
  return JSON.parse(said[1]!) as ReadonlyArray<string>
}
const ofCluster = (id: string) => id.startsWith("@effect/cluster/") || id.startsWith("@effect/rpc/")

const clusterModule = (path: string) => ["src/runtime/cluster/ConversationsLive.ts", "src/host/hostCluster.ts"].includes(path)

describe("the built kern evaluates @effect/cluster only in a process that runs the agent", () => {
  it("a `kern` process's start evaluates no module of the cluster", () => {
    // What main.ts imports (and they import) is what every full-CLI process evaluates; commands are imported lazily.
    const start = evaluatedWithout(modules, "src/main.ts", () => true)
    expect(start.has("src/cli/program.ts")).toBe(true)
    expect([...start].filter(cluster)).toEqual([])
  })

  it("a `kern status` process evaluates none of it (nor of @effect/rpc), as the walk says", () => {
    const dir = makeTempDir("kern-lazy-cluster-")
    writeFiles(dir, { ".kern/config.json": "{}\n" })
    const made = globalValuesOf([NodePath.join(testDist, "main.cjs"), "status", dir])
    expect(made.length).toBeGreaterThan(0)
    expect(made.filter(ofCluster)).toEqual([])
    // The check sees a module of the cluster that was evaluated.
    expect(globalValuesOf(["-e", "require('@effect/cluster/MessageStorage')"]).filter(ofCluster)).toContain("@effect/cluster/MessageStorage/noop")
  })

  it("the read-only commands evaluate no module of the cluster, whatever they import", () => {
    for (const command of ["status", "daemon", "recall", "context", "sessions"].map((name) => `src/cli/${name}.ts`)) {
      expect(lazilyImported(modules).has(command), command).toBe(true)
      expect([...evaluatedWithout(modules, command, clusterModule)].filter(cluster), command).toEqual([])
    }
  })

  it("the cluster is in the build, and reached only through the lazy conversations and runner modules", () => {
    const holders = Object.keys(modules).filter(cluster)
    expect(holders.length).toBeGreaterThan(0)
    for (const module of ["src/runtime/cluster/ConversationsLive.ts", "src/host/hostCluster.ts"]) {
      expect(lazilyImported(modules).has(module), module).toBe(true)
    }
    const reachable = new Set(["src/runtime/cluster/ConversationsLive.ts", "src/host/hostCluster.ts"]
      .flatMap((module) => [...evaluatedWithout(modules, module, () => false)]))
    for (const holder of holders) expect(reachable.has(holder), holder).toBe(true)
    // No other command reaches the cluster by any other path. The two that run agents, `kern run`/`start` and `kern
    // serve`, build the conversations at once anyway, and import parts of it themselves.
    const runsAgents = (path: string) => clusterModule(path) || ["src/cli/run.ts", "src/cli/serve.ts"].includes(path)
    expect([...evaluatedWithout(modules, "src/main.ts", runsAgents)].filter(cluster)).toEqual([])
  })
})
