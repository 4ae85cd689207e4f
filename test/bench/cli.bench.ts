import { spawnSync } from "node:child_process"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import type { Bench } from "./bench.js"
import { benchKernBin } from "./kernBuild.js"


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
    usesBuild: true,
    // Issue 28: `kern --help` within 2× `node -e 0`.
    targets: [{ of: "ratio", atMost: 2 }],
    unit: "ms",
    run: async () => {
      const kernBin = benchKernBin()
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
