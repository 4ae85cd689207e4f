import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Ref, Supervisor } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { openActiveSession } from "../../src/runtime/activeSession.js"
import { parseSession } from "../../src/session/parse.js"
import { MessageQueue } from "../../src/turn/MessageQueue.js"
import type { TurnEvent } from "../../src/turn/TurnEvent.js"
import { TurnRunner } from "../../src/turn/TurnRunner.js"
import { TurnStops } from "../../src/turn/TurnStops.js"
import { FakeReply, type FakeModelServerShape, make as makeFakeServer } from "../support/fakeModelServer.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { eventually } from "../support/waitFor.js"

// A turn that ends without its answer, in process: stopped (the signal the turn races with, as the watchdog's), or
// failed; either way recorded in the session, and what the model is sent for it afterwards.

const withAgent = <A, E>(
  body: (server: FakeModelServerShape, dir: string) => Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof agentRuntimeLayer>>>
) =>
  Effect.scoped(Effect.gen(function*() {
    const server = yield* makeFakeServer
    const dir = NodePath.join(makeTempDir(), "agent")
    writeFiles(dir, { ".kern/config.json": JSON.stringify({ model: "test-model", baseURL: server.baseURL, autoCommit: false }) })
    const runtime = agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 }).pipe(
      Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })),
      Layer.provide(NodeContext.layer)
    )
    return yield* body(server, dir).pipe(Effect.provide(runtime))
  }))

/** One turn of `text`, as the runtime runs it from its queue: its outcome, events and the session's messages after. */
const turn = (text: string, seen?: Ref.Ref<ReadonlyArray<TurnEvent>>) =>
  Effect.scoped(Effect.gen(function*() {
    const queue = yield* MessageQueue
    const runner = yield* TurnRunner
    const { session } = yield* openActiveSession()
    yield* queue.offer({ interface: "web", channel: "web", userId: "operator", text })
    const message = yield* queue.next
    const events = seen ?? (yield* Ref.make<ReadonlyArray<TurnEvent>>([]))
    const outcome = yield* runner.run({ message, session, emit: (event) => Ref.update(events, (all) => [...all, event]) })
    yield* queue.endTurn("main")
    return { outcome, events: yield* Ref.get(events), messages: yield* session.history.messages, turnId: message.turnId }
  }))

/** Stops the one running turn as the operator, once it runs and `ready` holds. */
const stopWhen = (ready: Effect.Effect<boolean>) =>
  Effect.gen(function*() {
    const stops = yield* TurnStops
    while (!(yield* ready) || (yield* stops.running).length === 0) yield* Effect.sleep("20 millis")
    return yield* stops.stopWhere(() => true, "operator")
  })

const sessionFileOf = (dir: string) => {
  const sessions = NodePath.join(dir, ".kern/sessions")
  const [file] = NodeFs.readdirSync(sessions).filter((name) => name.endsWith(".jsonl"))
  return NodePath.join(sessions, file!)
}

describe("a stopped turn", () => {
  it.live("stopped mid-stream: ends as Stopped with what the model had said recorded, and a turn-failed entry", () =>
    withAgent((server, dir) =>
      Effect.gen(function*() {
        // Three pieces of text; the stream sends the first two and then nothing, for as long as it is left open.
        yield* server.reply(FakeReply.text("Counting: one, two, three and more", { hangAfter: 3 }))
        const seen = yield* Ref.make<ReadonlyArray<TurnEvent>>([])
        const fiber = yield* Effect.fork(turn("count for a long time", seen))
        // Stopped once the streamed text has been shown (the reply filter holds its last characters back).
        const stopped = yield* stopWhen(Effect.map(Ref.get(seen), (events) => events.some((e) => e.type === "text-delta")))
        expect(stopped).toHaveLength(1)
        const { outcome, events, messages } = yield* Fiber.join(fiber)
        expect(outcome.failure?._tag).toBe("Stopped")
        expect(outcome.failure?.message).toBe("stopped by the operator")
        const error = events.find((e) => e.type === "error")
        expect(error?.type === "error" ? error.failure : undefined).toEqual({ _tag: "Stopped", by: "operator", message: "stopped by the operator" })
        expect(events.at(-1)?.type).toBe("finish")
        // What it had said is shown whole before the turn says it stopped (the reply filter lets its held text go).
        const errorAt = events.findIndex((e) => e.type === "error")
        const shown = events.slice(0, errorAt).map((e) => (e.type === "text-delta" ? e.delta : "")).join("")
        expect(events.slice(errorAt).some((e) => e.type === "text-delta")).toBe(false)
        expect(messages.map((m) => m._tag)).toEqual(["user", "assistant", "turn-failed"])
        const said = messages[1]
        expect(said?._tag === "assistant" ? said.text : "").toMatch(/^Counting: one, /)
        expect(shown).toBe(said?._tag === "assistant" ? said.text : "")
        expect(messages[2]).toMatchObject({ failure: "Stopped", message: "stopped by the operator" })
        // The file holds it too: a reload (or a restart) reads the failure back.
        const parsed = parseSession(NodeFs.readFileSync(sessionFileOf(dir)), "session")
        expect(parsed._tag).toBe("Right")
        if (parsed._tag === "Right") expect(parsed.right.messages.map((m) => m._tag)).toEqual(["user", "assistant", "turn-failed"])
      })), 120_000)

  it.live("stopped while a tool runs: the command's process is killed, the call gets a result saying so, no more model calls", () =>
    withAgent((server, dir) =>
      Effect.gen(function*() {
        const pidFile = NodePath.join(dir, "sleeper.pid")
        yield* server.reply(FakeReply.toolCalls([{ id: "call_1", name: "bash", args: { command: `echo $$ > ${pidFile}; sleep 300` } }]))
        const fiber = yield* Effect.fork(turn("run the long job"))
        yield* stopWhen(Effect.sync(() => NodeFs.existsSync(pidFile) && NodeFs.readFileSync(pidFile, "utf8").trim() !== ""))
        const pid = Number(NodeFs.readFileSync(pidFile, "utf8").trim())
        const { outcome, messages } = yield* Fiber.join(fiber)
        expect(outcome.failure?._tag).toBe("Stopped")
        const alive = () => {
          try {
            process.kill(pid, 0)
            return true
          } catch {
            return false
          }
        }
        expect(yield* eventually(() => !alive())).toBe(true)
        expect(messages.map((m) => m._tag)).toEqual(["user", "assistant", "tool", "turn-failed"])
        expect(messages[2]).toMatchObject({ toolCallId: "call_1", isError: true })
        expect(String(messages[2]?._tag === "tool" ? messages[2].result : "")).toContain("the turn was stopped")
        expect(yield* server.modelRequests).toHaveLength(1)
      })), 120_000)
})

describe("what being stoppable costs a turn", () => {
  it.live("while the model streams, the turn runs one fiber beside the stream (its watchdog, which a stop interrupts), no race per step", () =>
    withAgent((server) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.text("Counting: one, two, three and more", { hangAfter: 3 }))
        // The fibers of the turn alive while the model's text streams, before the stop.
        const forked = yield* Supervisor.track
        const alive = yield* Ref.make<number | undefined>(undefined)
        const seen = yield* Ref.make<ReadonlyArray<TurnEvent>>([])
        const fiber = yield* Effect.fork(Effect.supervised(turn("count for a long time", seen), forked))
        yield* stopWhen(Effect.gen(function*() {
          if (!(yield* Ref.get(seen)).some((e) => e.type === "text-delta")) return false
          if ((yield* Ref.get(alive)) === undefined) yield* Ref.set(alive, (yield* forked.value).length)
          return true
        }))
        const { outcome } = yield* Fiber.join(fiber)
        expect(outcome.failure?._tag).toBe("Stopped")
        // The stream's fiber and the guard beside it (the watchdog and the stop in one): a stop raced at each step as
        // well as the watchdog would be two more.
        expect(yield* Ref.get(alive)).toBe(2)
      })), 120_000)
})

describe("a failed turn", () => {
  it.live("is recorded, and the next turn sends the model the failed-turn note after the unanswered message", () =>
    withAgent((server) =>
      Effect.gen(function*() {
        // 400 is not retried: the turn fails at once.
        yield* server.reply(FakeReply.error(400), FakeReply.text("Fine, and you?"))
        const failed = yield* turn("what is the capital of Atlantis?")
        expect(failed.outcome.failure?._tag).toBe("ProviderFailed")
        expect(failed.messages.map((m) => m._tag)).toEqual(["user", "turn-failed"])
        expect(failed.messages[1]).toMatchObject({ failure: "ProviderFailed", turn: failed.turnId })

        const next = yield* turn("how are you?")
        expect(next.outcome.failure).toBeUndefined()
        const [, second] = yield* server.modelRequests
        const sent = (second?.body as { messages: ReadonlyArray<{ role: string; content: unknown }> }).messages
        const texts = sent.map((m) => `${m.role}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`)
        const asked = texts.findIndex((t) => t.startsWith("user:") && t.includes("capital of Atlantis"))
        expect(asked).toBeGreaterThan(0)
        expect(texts[asked + 1]).toMatch(/^assistant: \[kern: this turn ended without an answer: .*\(ProviderFailed\)\. The message above was not answered/)
        expect(texts[asked + 2]).toMatch(/^user: .*how are you\?/s)
      })), 120_000)
})
