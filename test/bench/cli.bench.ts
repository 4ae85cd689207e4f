import { spawnSync } from "node:child_process"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import type { Bench } from "./bench.js"

const kernBin = NodePath.resolve(import.meta.dirname, "../../bin/kern.js")

const timeProcess = (args: ReadonlyArray<string>): number => {
  const start = performance.now()
  const result = spawnSync(process.execPath, args, { stdio: "ignore" })
  const elapsed = performance.now() - start
  if (result.status !== 0) throw new Error(`${args.join(" ")} exited ${result.status}`)
  return elapsed
}

const runs = 15

export const benches: ReadonlyArray<Bench> = [
  {
    name: "cli.coldstart.help",
    unit: "ms",
    run: async () => {
      const build = spawnSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" })
      if (build.status !== 0) throw new Error("build failed")
      // Warm the OS file cache for both before measuring, then interleave so drift hits both alike.
      timeProcess([kernBin, "--help"])
      timeProcess(["-e", "0"])
      const samples: Array<number> = []
      const baseline: Array<number> = []
      for (let i = 0; i < runs; i++) {
        samples.push(timeProcess([kernBin, "--help"]))
        baseline.push(timeProcess(["-e", "0"]))
      }
      return { samples, baseline }
    }
  }
]
