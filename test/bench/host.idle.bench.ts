import { type ChildProcess, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Effect, Either, Layer } from "effect"
import * as Database from "../../src/storage/Database.js"
import { operatorOrigin } from "../../src/tools/Followups.js"
import { draftSchedule } from "../../src/tools/schedules/newSchedule.js"
import { ScheduleStore } from "../../src/tools/schedules/ScheduleStore.js"
import { cpuPerMinute, rssMb, sleep } from "./agentProcess.js"
import type { Bench } from "./bench.js"
import { benchAgent } from "./fixtures.js"

// host.idle.passive: the CPU per minute of a host's wake sources over 100 passive agents, each with schedules (a
// daily cron and a one-shot days ahead: none due while measured) and a heartbeat every 60 minutes, against the same
// host over no agent, both child processes sampled side by side in the same run. Extra figures: each one's RSS, and
// the RSS a passive agent adds ((with − without) / 100, in KB; the first kern.db open's SQLite is in it).

const agentCount = 100
const root = NodePath.resolve(import.meta.dirname, "../..")

const addSchedules = (dir: string, i: number) =>
  Effect.runPromise(Effect.gen(function*() {
    const store = yield* ScheduleStore
    for (const request of [{ cron: `${i % 60} 3 * * *`, prompt: `daily ${i}` }, { at: `in ${2 + (i % 20)} days at 09:00`, prompt: `reminder ${i}` }]) {
      const draft = draftSchedule(request, Date.now(), "UTC")
      if (Either.isLeft(draft)) throw new Error(draft.left)
      yield* store.add(draft.right, { origin: operatorOrigin, deliverTo: null, createdBy: "operator" })
    }
  }).pipe(
    Effect.provide(ScheduleStore.Default.pipe(Layer.provide(Database.layer({ filename: NodePath.join(dir, ".kern/kern.db") })))),
    Effect.scoped
  ))

const startHost = async (dirs: ReadonlyArray<string>, listFile: string) => {
  NodeFs.writeFileSync(listFile, dirs.map((dir) => `${dir}\n`).join(""))
  const child = spawn(process.execPath, ["--import", "tsx", NodePath.join(root, "test/bench/hostIdleChild.ts"), listFile], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"]
  })
  let said = ""
  child.stdout?.on("data", (chunk: Buffer) => (said += chunk.toString("utf8")))
  const until = Date.now() + 120_000
  while (!said.includes(`ready ${dirs.length}`)) {
    if (Date.now() > until || child.exitCode !== null) throw new Error(`the host over ${dirs.length} agents never got ready: ${said}`)
    await sleep(100)
  }
  if (said.includes("woke")) throw new Error(`an agent was woken while none was due: ${said}`)
  return child
}

const idlePassive = (rounds: number, windowMs: number) => async () => {
  const agents = Array.from({ length: agentCount }, () => benchAgent(undefined, { model: "bench-model", heartbeatInterval: 60, autoCommit: false, recall: false }))
  const children: Array<ChildProcess> = []
  try {
    for (const [i, agent] of agents.entries()) await addSchedules(agent.dir, i)
    const listDir = NodeFs.mkdtempSync(NodePath.join(NodePath.dirname(agents[0]!.dir), "host-"))
    const withAgents = await startHost(agents.map((agent) => agent.dir), NodePath.join(listDir, "with"))
    children.push(withAgents)
    const without = await startHost([], NodePath.join(listDir, "without"))
    children.push(without)
    await sleep(5_000)
    const { samples, baseline } = await cpuPerMinute(withAgents.pid ?? 0, without.pid ?? 0, rounds, windowMs)
    const [rssWith, rssWithout] = [rssMb(withAgents.pid ?? 0), rssMb(without.pid ?? 0)]
    return { samples, baseline, extra: { rssWithMb: rssWith, rssWithoutMb: rssWithout, rssPerPassiveKb: (rssWith - rssWithout) * 1024 / agentCount } }
  } finally {
    for (const child of children) child.kill()
    for (const agent of agents) agent.remove()
  }
}

export const benches: ReadonlyArray<Bench> = [
  {
    name: "host.idle.passive",
    unit: "ms CPU per minute (100 passive agents with schedules; baseline: a host with none)",
    // A passive agent is a record and a stat of four files every 10 s: 100 of them cost well under a tenth of a core-second a minute.
    targets: [{ of: "median", atMost: 100 }, { of: "extra.rssPerPassiveKb", atMost: 1024 }],
    run: idlePassive(5, 12_000)
  }
]
