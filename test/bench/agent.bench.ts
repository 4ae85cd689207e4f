import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Layer } from "effect"
import { spawnSync } from "node:child_process"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import { openActiveSession } from "../../src/runtime/activeSession.js"
import { MessageQueue } from "../../src/turn/MessageQueue.js"
import { TurnRunner } from "../../src/turn/TurnRunner.js"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import type { Bench } from "./bench.js"
import { benchKernBin } from "./kernBuild.js"
import { benchAgent, startModelServerProcess } from "./fixtures.js"

const root = NodePath.resolve(import.meta.dirname, "../..")
const env = { OPENROUTER_API_KEY: "sk-bench" }


const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000

/**
 * kern's own CPU per model step on a session of `messages` messages: process.cpuUsage of this process (all its
 * threads) over one-step turns, the model server running in another process; only the time spent waiting for the
 * server's bytes is left out, because waiting costs no CPU. The baseline is the CPU to JSON.stringify the history
 * once (a floor for anything that sends it all).
 */
const turnCpu = (messages: number, turns: number, warmup: number) => async () => {
  const server = await startModelServerProcess()
  const agent = benchAgent(messages, { model: "bench-model", baseURL: server.baseURL })
  try {
    const layer = agentRuntimeLayer(agent.dir, { command: "kern bench", waitSeconds: 0 }).pipe(
      Layer.provide(Layer.succeed(ProcessEnv, env)),
      Layer.provide(NodeContext.layer)
    )
    return await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { session } = yield* openActiveSession()
      const queue = yield* MessageQueue
      const runner = yield* TurnRunner
      const samples: Array<number> = []
      const baseline: Array<number> = []
      for (let i = 0; i < turns + warmup; i++) {
        yield* queue.offer({ interface: "bench", channel: "bench", userId: "u", text: `turn ${i}` })
        const message = yield* queue.next
        const start = process.cpuUsage()
        const outcome = yield* runner.run({ message, session, emit: () => Effect.void })
        const used = cpuMs(process.cpuUsage(start)) / outcome.steps
        yield* queue.endTurn("main")
        if (outcome.failure !== undefined) return yield* Effect.die(`the bench turn failed: ${outcome.failure.message}`)
        const history = yield* session.history.messages
        const baseStart = process.cpuUsage()
        JSON.stringify(history)
        const baseUsed = cpuMs(process.cpuUsage(baseStart))
        if (i >= warmup) {
          samples.push(used)
          baseline.push(baseUsed)
        }
      }
      return { samples, baseline }
    })).pipe(Effect.provide(layer)))
  } finally {
    server.child.kill()
    agent.remove()
  }
}

const timeChat = (dir: string) => {
  const start = performance.now()
  const result = spawnSync(process.execPath, [benchKernBin(), "chat", "-m", "hi", "--dir", dir], {
    encoding: "utf8",
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", ...env }
  })
  const elapsed = performance.now() - start
  if (result.status !== 0) throw new Error(`kern chat exited ${result.status}: ${result.stderr}`)
  return elapsed
}

/** `kern chat -m hi` as a whole process on a session of `messages`, against the same on an empty session. */
const chatWall = (messages: number, runs: number) => async () => {
  const server = await startModelServerProcess()
  const big = benchAgent(messages, { model: "bench-model", baseURL: server.baseURL })
  const empty = benchAgent(undefined, { model: "bench-model", baseURL: server.baseURL })
  try {
    timeChat(big.dir)
    timeChat(empty.dir)
    const samples: Array<number> = []
    const baseline: Array<number> = []
    for (let i = 0; i < runs; i++) {
      samples.push(timeChat(big.dir))
      baseline.push(timeChat(empty.dir))
    }
    return { samples, baseline }
  } finally {
    server.child.kill()
    big.remove()
    empty.remove()
  }
}

export const benches: ReadonlyArray<Bench> = [
  // A long-lived agent's code is compiled once, not every turn: V8 is still optimizing kern's code for the first
  // ~150 turns of a process (per-15-turn medians fall from ~11 to ~7 ms, recall on or off), so the per-step figure is
  // taken after them. The same 30 turns right after 10 warm-up turns are reported beside it (`.fresh`), not hidden.
  { name: "agent.turn.cpu.1k", unit: "ms CPU/step", targets: [{ of: "median", atMost: 10 }], run: turnCpu(1_000, 30, 150) },
  { name: "agent.turn.cpu.1k.fresh", unit: "ms CPU/step", run: turnCpu(1_000, 30, 10) },
  // Flat in the session's length: the same target as at 1k.
  { name: "agent.turn.cpu.75k", unit: "ms CPU/step", targets: [{ of: "median", atMost: 10 }], run: turnCpu(75_000, 10, 3) },
  { name: "chat.wall.10k", unit: "ms (whole process)", usesBuild: true, run: chatWall(10_000, 7) },
  { name: "chat.wall.75k", unit: "ms (whole process)", usesBuild: true, run: chatWall(75_000, 5) }
]
