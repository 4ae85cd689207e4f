import { LanguageModel } from "@effect/ai"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Context, Effect, Layer, Ref, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import { openActiveSession } from "../../src/agent/activeSession.js"
import { MessageQueue } from "../../src/agent/MessageQueue.js"
import { TurnRunner } from "../../src/agent/TurnRunner.js"
import { toPromptMessages } from "../../src/agent/prompt.js"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import * as AgentConfig from "../../src/config/AgentConfig.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { AssistantMessage, UserMessage } from "../../src/session/messages.js"
import { SessionStore } from "../../src/session/SessionStore.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import type { Bench } from "./bench.js"

const at = "2026-11-22T10:00:00.000Z"
const history = Array.from({ length: 1000 }, (_, i) =>
  i % 2 === 0
    ? new UserMessage({ text: `question ${i}: what changed in the router config since yesterday?`, at })
    : new AssistantMessage({ text: `answer ${i}: the DHCP range moved to .100-.200 and DNS now points at the pi.`, at }))

const turns = 30

/**
 * kern's own milliseconds per one-step turn (the turn less its model time) on a 1,000-message session; the
 * baseline is a bare model call on the same prompt.
 */
const turnOverhead = Effect.scoped(Effect.gen(function*() {
  const server = yield* makeFakeServer
  const dir = NodePath.join(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kern-bench-")), "agent")
  NodeFs.mkdirSync(NodePath.join(dir, ".kern"), { recursive: true })
  NodeFs.writeFileSync(NodePath.join(dir, ".kern/config.json"), JSON.stringify({ model: "bench-model", baseURL: server.baseURL }))
  const layer = agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 }).pipe(
    Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-bench" })),
    Layer.provide(NodeContext.layer)
  )
  const context = yield* Layer.build(layer)
  return yield* Effect.gen(function*() {
    const { session } = yield* openActiveSession()
    for (const message of history) yield* session.writer.append(message)
    yield* Ref.set(session.messages, history)
    const queue = yield* MessageQueue
    const runner = yield* TurnRunner
    const model = yield* LanguageModel.LanguageModel
    const samples: Array<number> = []
    const baseline: Array<number> = []
    for (let i = 0; i < turns + 3; i++) {
      yield* server.reply(FakeReply.text("ok"), FakeReply.text("ok"))
      // The model alone: the same prompt, streamed to the end.
      const prompt = toPromptMessages("system", yield* Ref.get(session.messages))
      const modelStart = performance.now()
      yield* Stream.runDrain(model.streamText({ prompt }))
      const modelMs = performance.now() - modelStart
      yield* queue.offer({ interface: "bench", channel: "bench", userId: "u", text: `turn ${i}` })
      const message = yield* queue.next
      const start = performance.now()
      const outcome = yield* runner.run({ message, session, emit: () => Effect.void })
      // Excluding the model: the turn less the time its model calls took (measured inside the turn).
      const turnMs = performance.now() - start - outcome.modelMs
      yield* queue.endTurn
      if (i >= 3) {
        samples.push(turnMs)
        baseline.push(modelMs)
      }
    }
    return { samples, baseline }
  }).pipe(Effect.provide(context))
}))

const rounds = 10
const appendsPerRound = 200

const p99 = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.99) - 1] ?? Number.NaN

/** p99 of one appended message per round of 200, through SessionStore and with a bare appendFileSync. */
const sessionAppend = Effect.scoped(Effect.gen(function*() {
  const dir = NodePath.join(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kern-bench-")), "agent")
  NodeFs.mkdirSync(NodePath.join(dir, ".kern"), { recursive: true })
  NodeFs.writeFileSync(NodePath.join(dir, ".kern/config.json"), "{}")
  const layer = SessionStore.Default.pipe(
    Layer.provide(AgentConfig.layer(dir)),
    Layer.provide(Layer.succeed(ProcessEnv, {})),
    Layer.provideMerge(NodeContext.layer)
  )
  const store = Context.get(yield* Layer.build(layer), SessionStore)
  const id = yield* store.create
  const { writer } = yield* store.open(id)
  const raw = NodePath.join(dir, "raw.jsonl")
  const message = history[1]!
  const line = `${JSON.stringify(message)}\n`
  const samples: Array<number> = []
  const baseline: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    const ours: Array<number> = []
    const bare: Array<number> = []
    for (let i = 0; i < appendsPerRound; i++) {
      const start = performance.now()
      yield* writer.append(message)
      ours.push(performance.now() - start)
      const rawStart = performance.now()
      NodeFs.appendFileSync(raw, line)
      bare.push(performance.now() - rawStart)
    }
    samples.push(p99(ours))
    baseline.push(p99(bare))
  }
  return { samples, baseline }
}))

export const benches: ReadonlyArray<Bench> = [
  { name: "agent.turn.overhead", unit: "ms/step excl. model", run: () => Effect.runPromise(turnOverhead) },
  { name: "session.append", unit: "ms (p99 per round)", run: () => Effect.runPromise(sessionAppend) }
]
