import { spawnSync } from "node:child_process"
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

/** `kern <args>` against `node -e 0`, warmed once, then interleaved so drift hits both alike. */
const againstNode = (args: ReadonlyArray<string>) => async () => {
  const kernBin = benchKernBin()
  timeProcess([kernBin, ...args])
  timeProcess(["-e", "0"])
  const samples: Array<number> = []
  const baseline: Array<number> = []
  for (let i = 0; i < runs; i++) {
    samples.push(timeProcess([kernBin, ...args]))
    baseline.push(timeProcess(["-e", "0"]))
  }
  return { samples, baseline }
}

export const benches: ReadonlyArray<Bench> = [
  {
    name: "cli.coldstart.help",
    usesBuild: true,
    // Issue 28: `kern --help` within 2× `node -e 0`.
    targets: [{ of: "ratio", atMost: 2 }],
    unit: "ms",
    run: againstNode(["--help"])
  },
  {
    name: "cli.coldstart.command-help",
    usesBuild: true,
    // Issue 28: `kern <command> --help` within 2× `node -e 0` too.
    targets: [{ of: "ratio", atMost: 2 }],
    unit: "ms",
    run: againstNode(["chat", "--help"])
  }
]
