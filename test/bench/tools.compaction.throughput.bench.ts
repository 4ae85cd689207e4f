// Compaction throughput: MB/s compacting a 10 MB tool output (pure compaction, sectioned like bash output).
// Baseline: MB/s of only splitting the same text into lines, the floor any line-based compactor pays. Extra
// cpuMegabytesPerSecond: the rate by this process's CPU time, which the load of a shared machine does not move.
import { performance } from "node:perf_hooks"
import { compactText } from "../../src/tools/compaction.js"
import { type Bench, median } from "./bench.js"

const targetBytes = 10 * 1024 * 1024
const runs = 15

const makeOutput = (): string => {
  const lines: Array<string> = ["exit code: 1", "STDOUT:"]
  let bytes = 0
  for (let i = 0; bytes < targetBytes * 0.9; i++) {
    const line = i % 997 === 0
      ? `src/module${i}.ts:${i}:7 - error TS2322: Type 'string' is not assignable to type 'number'`
      : i % 1499 === 0
      ? `warning: deprecated option --legacy at step ${i}`
      : `[${i}] compiling chunk ${i} of the bundle (${(i * 7919) % 100000} bytes) ok`
    lines.push(line)
    bytes += line.length + 1
  }
  lines.push("STDERR:")
  for (let i = 0; bytes < targetBytes; i++) {
    const line = i % 500 === 0 ? `Tests: ${i} failed, ${i * 3} passed` : `stderr noise line ${i}`
    lines.push(line)
    bytes += line.length + 1
  }
  return lines.join("\n")
}

const megabytes = (text: string) => Buffer.byteLength(text) / (1024 * 1024)

export const benches: ReadonlyArray<Bench> = [
  {
    name: "tools.compaction.throughput",
    unit: "MB/s",
    higherIsBetter: true,
    targets: [{ of: "median", atLeast: 100 }],
    run: async () => {
      const text = makeOutput()
      const size = megabytes(text)
      compactText(text, true)
      const samples: Array<number> = []
      const baseline: Array<number> = []
      const cpuRates: Array<number> = []
      for (let i = 0; i < runs; i++) {
        const cpu = process.cpuUsage()
        let start = performance.now()
        const out = compactText(text, true)
        samples.push(size / ((performance.now() - start) / 1000))
        const used = process.cpuUsage(cpu)
        cpuRates.push(size / ((used.user + used.system) / 1_000_000))
        if (out.length >= text.length) throw new Error("compaction did not shrink the output")
        start = performance.now()
        const lines = text.split("\n")
        baseline.push(size / ((performance.now() - start) / 1000))
        if (lines.length === 0) throw new Error("no lines")
      }
      return { samples, baseline, extra: { cpuMegabytesPerSecond: median(cpuRates) } }
    }
  }
]
