import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { Bench } from "./bench.js"
import { benchKernBin } from "./kernBuild.js"
import { benchAgent, startModelServerProcess } from "./fixtures.js"

// An idle agent with 10 running background jobs (`sleep 600`) against an idle agent with none, both started and
// sampled side by side in the same run: CPU per minute (the samples and the baseline) and RSS (extra figures). The
// jobs are started as a model would: the fake model answers `BENCH-JOBS-10` with ten background bash calls.

const env = { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", OPENROUTER_API_KEY: "sk-bench" }
const jobCount = 10

const kern = (args: ReadonlyArray<string>) => {
  const result = spawnSync(process.execPath, [benchKernBin(), ...args], { encoding: "utf8", env })
  if (result.status !== 0) throw new Error(`kern ${args.join(" ")} exited ${result.status}: ${result.stderr}`)
  return result
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** User plus system CPU time of a process so far, in ms (clock ticks of 10 ms). */
const cpuMs = (pid: number): number => {
  const stat = NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

const rssMb = (pid: number): number => {
  const line = /^VmRSS:\s+(\d+) kB$/m.exec(NodeFs.readFileSync(`/proc/${pid}/status`, "utf8"))
  if (line === null) throw new Error(`no VmRSS for pid ${pid}`)
  return Number(line[1]) / 1024
}

const pidOf = (dir: string) => {
  const record = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, ".kern/agent.pid"), "utf8")) as number | { pid: number }
  return typeof record === "number" ? record : record.pid
}

const runningJobs = (dir: string) =>
  (JSON.parse(kern(["jobs", "--json", "--dir", dir]).stdout) as ReadonlyArray<{ state: string }>)
    .filter((job) => job.state === "running").length

const idleWithJobs = (rounds: number, windowMs: number) => async () => {
  const server = await startModelServerProcess()
  const config = { model: "bench-model", baseURL: server.baseURL, heartbeatInterval: 0, autoCommit: false, recall: false }
  const withJobs = benchAgent(undefined, { ...config, jobs: { maxConcurrent: jobCount } })
  const without = benchAgent(undefined, config)
  try {
    kern(["start", "--dir", withJobs.dir])
    kern(["start", "--dir", without.dir])
    kern(["chat", "--dir", withJobs.dir, "-m", `BENCH-JOBS-${jobCount}`])
    kern(["chat", "--dir", without.dir, "-m", "hello"])
    if (runningJobs(withJobs.dir) !== jobCount) throw new Error(`expected ${jobCount} running jobs`)
    const [a, b] = [pidOf(withJobs.dir), pidOf(without.dir)]
    // Let both settle after their turns (recall, summaries, the session's files) before measuring.
    await sleep(5_000)
    const samples: Array<number> = []
    const baseline: Array<number> = []
    for (let round = 0; round < rounds; round++) {
      const [a0, b0] = [cpuMs(a), cpuMs(b)]
      await sleep(windowMs)
      const [a1, b1] = [cpuMs(a), cpuMs(b)]
      samples.push((a1 - a0) * 60_000 / windowMs)
      baseline.push((b1 - b0) * 60_000 / windowMs)
    }
    if (runningJobs(withJobs.dir) !== jobCount) throw new Error(`the ${jobCount} jobs did not keep running`)
    return { samples, baseline, extra: { rssJobsMb: rssMb(a), rssNoneMb: rssMb(b) } }
  } finally {
    spawnSync(process.execPath, [benchKernBin(), "stop", "--dir", withJobs.dir], { env, stdio: "ignore" })
    spawnSync(process.execPath, [benchKernBin(), "stop", "--dir", without.dir], { env, stdio: "ignore" })
    server.child.kill()
    withJobs.remove()
    without.remove()
  }
}

export const benches: ReadonlyArray<Bench> = [
  { name: "agent.idle.jobs", unit: "ms CPU/min (baseline: idle, no jobs)", usesBuild: true, run: idleWithJobs(6, 10_000) }
]
