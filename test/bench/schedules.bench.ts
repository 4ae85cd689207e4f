import { Effect, Either, Layer } from "effect"
import * as NodePath from "node:path"
import * as Database from "../../src/storage/Database.js"
import { operatorOrigin } from "../../src/tools/Followups.js"
import { draftSchedule } from "../../src/tools/schedules/newSchedule.js"
import { ScheduleStore } from "../../src/tools/schedules/ScheduleStore.js"
import { agentHttp, cpuPerMinute, kernCommand as kern, pidOf, rssMb, sleep, stopAgent } from "./agentProcess.js"
import type { Bench } from "./bench.js"
import { benchAgent, startModel, startModelServerProcess } from "./fixtures.js"

// agent.idle.schedules: an idle agent with 100 schedules (50 daily crons, 50 one-shots days ahead: none fires while
// it is measured) against an idle agent with none, started and sampled side by side in the same run: CPU per minute
// (the samples and the baseline) and RSS (extra figures). The Scheduler is one loop asleep until the earliest due
// time, reading kern.db every 10 s for what other processes added.
//
// schedule.fire.latency: a one-shot's due time → its turn's first model request at the fake model server (which
// writes when each `BENCH-FIRE-<tag>` request arrived), against the floor measured in the same run, alternating: a
// message POSTed to /message → its turn's first model request. Each one-shot is added over HTTP 1.5 s ahead (the
// running agent's Scheduler is woken at once and sleeps until it is due).

const scheduleCount = 100

/** Writes `count` schedules into the folder's kern.db as `kern schedule add` would (the agent not running yet). */
const addSchedules = (dir: string, count: number) =>
  Effect.runPromise(Effect.gen(function*() {
    const store = yield* ScheduleStore
    const nowMs = Date.now()
    for (let i = 0; i < count; i++) {
      const request = i % 2 === 0
        ? { cron: `${i % 60} ${3 + (i % 4)} * * *`, prompt: `daily check ${i}` }
        : { at: `in ${2 + (i % 20)} days at 09:${String(i % 60).padStart(2, "0")}`, prompt: `reminder ${i}` }
      const draft = draftSchedule(request, nowMs, "UTC")
      if (Either.isLeft(draft)) throw new Error(draft.left)
      yield* store.add(draft.right, { origin: operatorOrigin, deliverTo: null, createdBy: "operator" })
    }
  }).pipe(
    Effect.provide(ScheduleStore.Default.pipe(Layer.provide(Database.layer({ filename: NodePath.join(dir, ".kern/kern.db") })))),
    Effect.scoped
  ))

const scheduleTotal = (dir: string) => (JSON.parse(kern(["schedule", "list", "--dir", dir, "--json"]).stdout) as ReadonlyArray<unknown>).length

const idleWithSchedules = (rounds: number, windowMs: number) => async () => {
  const server = await startModelServerProcess()
  const config = { model: "bench-model", baseURL: server.baseURL, heartbeatInterval: 0, autoCommit: false, recall: false }
  const withSchedules = benchAgent(undefined, config)
  const without = benchAgent(undefined, config)
  try {
    await addSchedules(withSchedules.dir, scheduleCount)
    kern(["start", "--dir", withSchedules.dir])
    kern(["start", "--dir", without.dir])
    kern(["chat", "--dir", withSchedules.dir, "-m", "hello"])
    kern(["chat", "--dir", without.dir, "-m", "hello"])
    if (scheduleTotal(withSchedules.dir) !== scheduleCount) throw new Error(`expected ${scheduleCount} schedules`)
    const [a, b] = [pidOf(withSchedules.dir), pidOf(without.dir)]
    // Let both settle after their turns before measuring.
    await sleep(5_000)
    const { samples, baseline } = await cpuPerMinute(a, b, rounds, windowMs)
    return { samples, baseline, extra: { rssSchedulesMb: rssMb(a), rssNoneMb: rssMb(b) } }
  } finally {
    stopAgent(withSchedules.dir)
    stopAgent(without.dir)
    server.child.kill()
    withSchedules.remove()
    without.remove()
  }
}

const fireLatency = (rounds: number) => async () => {
  const model = await startModel()
  const arrivalOf = model.arrivalOf
  const agent = benchAgent(undefined, { model: "bench-model", baseURL: model.baseURL, heartbeatInterval: 0, autoCommit: false, recall: false, timezone: "UTC" })
  try {
    kern(["start", "--dir", agent.dir])
    const http = agentHttp(agent.dir)
    const post = async (path: string, body: unknown, expected: number) => {
      const response = await fetch(`${http.base}${path}`, { method: "POST", headers: http.headers, body: JSON.stringify(body) })
      if (response.status !== expected) throw new Error(`POST ${path} answered ${response.status}: ${await response.text()}`)
      return response.json()
    }
    // A first turn of each kind (the first turn of a process loads what later ones have), not counted.
    await post("/message", { text: "BENCH-FIRE-warm" }, 202)
    await arrivalOf("warm")
    const samples: Array<number> = []
    const baseline: Array<number> = []
    for (let round = 0; round <= rounds; round++) {
      const dueMs = Date.now() + 1_500
      await post("/schedules", { prompt: `BENCH-FIRE-s${round}`, at: new Date(dueMs).toISOString() }, 201)
      const fired = await arrivalOf(`s${round}`)
      // The firing's turn ends before the message is sent (one conversation: it would wait for that turn).
      await sleep(500)
      const sentMs = Date.now()
      await post("/message", { text: `BENCH-FIRE-m${round}` }, 202)
      const answered = await arrivalOf(`m${round}`)
      // Round 0 warms the schedule path (its first firing) and is not counted.
      if (round === 0) continue
      samples.push(fired - dueMs)
      baseline.push(answered - sentMs)
      // Let the message's turn finish before the next one-shot is due.
      await sleep(500)
    }
    return { samples, baseline }
  } finally {
    stopAgent(agent.dir)
    model.stop()
    agent.remove()
  }
}

export const benches: ReadonlyArray<Bench> = [
  { name: "agent.idle.schedules", unit: "ms CPU/min (baseline: idle, no schedules)", usesBuild: true, run: idleWithSchedules(6, 10_000) },
  { name: "schedule.fire.latency", unit: "ms due time → first model request (baseline: POST /message → first model request)", usesBuild: true, run: fireLatency(10) }
]
