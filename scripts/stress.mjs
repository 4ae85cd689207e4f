// `npm run test:stress`: the whole suite three times in a row while the machine is kept busy, as it is when other work
// shares it. Busy means CPU-bound loads it starts and stops itself (`yes` into /dev/null, each one also ended by
// `timeout` should this script die), so that the load average stays near 6 on a 2-core machine with the tests' own.
// Not part of CI: it takes three runs of the suite.
import { spawn } from "node:child_process"
import { loadavg } from "node:os"

const runs = Number(process.env["KERN_STRESS_RUNS"] ?? 3)
const loads = Number(process.env["KERN_STRESS_LOADS"] ?? 4)
const maxSeconds = 3 * 60 * 60

const generators = Array.from({ length: loads }, () =>
  spawn("timeout", [String(maxSeconds), "yes"], { stdio: ["ignore", "ignore", "ignore"] }))
const stopLoads = () => {
  // SIGTERM, which `timeout` passes on to its `yes` (a SIGKILL would end `timeout` alone and leave `yes` running).
  for (const child of generators) child.kill("SIGTERM")
}
process.on("exit", stopLoads)
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130))

// Each run also writes vitest's JSON report (per-file durations) to test-output/stress-run-N.json, and the load average
// is sampled every 10 s while it runs: the table at the end gives its mean and maximum, which is what "busy" was.
const suite = (run) =>
  new Promise((resolve) => {
    const started = Date.now()
    const samples = []
    const sampler = setInterval(() => samples.push(loadavg()[0]), 10_000)
    const child = spawn(
      process.execPath,
      ["node_modules/vitest/vitest.mjs", "run", "--reporter=default", "--reporter=json", `--outputFile.json=test-output/stress-run-${run}.json`],
      { stdio: "inherit" }
    )
    child.on("exit", (code) => {
      clearInterval(sampler)
      const mean = samples.length === 0 ? loadavg()[0] : samples.reduce((a, b) => a + b, 0) / samples.length
      resolve({ code: code ?? 1, seconds: Math.round((Date.now() - started) / 1000), mean, max: Math.max(mean, ...samples) })
    })
  })

const results = []
for (let run = 1; run <= runs; run++) {
  console.log(`\n── stress run ${run} of ${runs}: ${loads} load generators, load average ${loadavg()[0].toFixed(1)} ──\n`)
  results.push({ run, ...(await suite(run)) })
}
stopLoads()
console.log("\nrun  exit  wall     load average (mean, max)")
for (const r of results) {
  console.log(`${String(r.run).padEnd(5)}${String(r.code).padEnd(6)}${`${r.seconds} s`.padEnd(9)}${r.mean.toFixed(1)}, ${r.max.toFixed(1)}`)
}
const failed = results.filter((r) => r.code !== 0).length
console.log(failed === 0 ? `all ${runs} runs passed` : `${failed} of ${runs} runs failed`)
process.exit(failed === 0 ? 0 : 1)
