import { cpuPerMinute, kernCommand as kern, pidOf, rssMb, sleep, stopAgent } from "./agentProcess.js"
import type { Bench } from "./bench.js"
import { benchAgent, startModelServerProcess } from "./fixtures.js"

// An idle agent with 10 running background jobs (`sleep 600`) against an idle agent with none, both started and
// sampled side by side in the same run: CPU per minute (the samples and the baseline) and RSS (extra figures). The
// jobs are started as a model would: the fake model answers `BENCH-JOBS-10` with ten background bash calls.

const jobCount = 10

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
    const { samples, baseline } = await cpuPerMinute(a, b, rounds, windowMs)
    if (runningJobs(withJobs.dir) !== jobCount) throw new Error(`the ${jobCount} jobs did not keep running`)
    return { samples, baseline, extra: { rssJobsMb: rssMb(a), rssNoneMb: rssMb(b) } }
  } finally {
    stopAgent(withJobs.dir)
    stopAgent(without.dir)
    server.child.kill()
    withJobs.remove()
    without.remove()
  }
}

export const benches: ReadonlyArray<Bench> = [
  { name: "agent.idle.jobs", unit: "ms CPU/min (baseline: idle, no jobs)", usesBuild: true, run: idleWithJobs(6, 10_000) }
]
