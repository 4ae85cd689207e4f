// The cost of the end of a bash call: kern's bash tool running `true` (the process group killed and /proc scanned
// for processes carrying the call's tag) against spawning `bash -c true` directly; and one /proc scan on its own
// against listing /proc.
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import * as Database from "../../src/storage/Database.js"
import { bash } from "../../src/tools/bash.js"
import { killTagged } from "../../src/tools/processTag.js"
import * as ToolServices from "../../src/tools/ToolServices.js"
import type { Bench } from "./bench.js"

const runs = 40

const timeBash = (root: string) =>
  Effect.gen(function*() {
    const samples: Array<number> = []
    for (let i = 0; i < runs; i++) {
      const start = performance.now()
      const out = yield* bash({ command: "true" })
      samples.push(performance.now() - start)
      if (out.exitCode !== 0) throw new Error(`bash exited ${out.exitCode}`)
    }
    return samples
  }).pipe(
    Effect.provide(
      ToolServices.layerTest(root, { env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" } }).pipe(
        Layer.provideMerge(Database.layerMemory),
        Layer.provideMerge(NodeContext.layer),
        Layer.orDie
      )
    )
  )

const timeSpawn = (): Array<number> => {
  const samples: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    spawnSync("/bin/bash", ["-c", "true"], { stdio: ["ignore", "pipe", "pipe"] })
    samples.push(performance.now() - start)
  }
  return samples
}

export const benches: ReadonlyArray<Bench> = [
  {
    name: "tools.bash.true",
    unit: "ms",
    run: async () => {
      const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kern-bench-bash-"))
      try {
        await Effect.runPromise(timeBash(root))
        timeSpawn()
        return { samples: await Effect.runPromise(timeBash(root)), baseline: timeSpawn() }
      } finally {
        NodeFs.rmSync(root, { recursive: true, force: true })
      }
    }
  },
  {
    name: "tools.bash.procScan",
    unit: "ms",
    run: async () => {
      const samples: Array<number> = []
      const baseline: Array<number> = []
      for (let i = 0; i < runs; i++) {
        const start = performance.now()
        // No process carries this tag and there is no group: one scan that finds nothing, as on the happy path.
        const reaped = await Effect.runPromise(killTagged(`bench-${i}`, 2 ** 22 + 1))
        samples.push(performance.now() - start)
        if (reaped.killed.length !== 0) throw new Error("the scan found a process")
        const list = performance.now()
        NodeFs.readdirSync("/proc")
        baseline.push(performance.now() - list)
      }
      return { samples, baseline }
    }
  }
]
