import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, PubSub } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Agent from "../../src/agent/Agent.js"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { AgentRuntime } from "../../src/runtime/AgentRuntime.js"
import { servingRuntimeLayer } from "../../src/runtime/layers.js"
import type { TurnEvent } from "../../src/turn/TurnEvent.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { turnEvents } from "../support/runtimeTurn.js"
import { fillDisk, tinyDisk } from "../support/tinyDisk.js"

const env = { OPENROUTER_API_KEY: "sk-test" }

/** How one driver ended a turn on a full disk, and the next turn once space was freed. */
interface Ended {
  /** The failure's tag and reason: a SessionNotWritten, as data. */
  readonly failure: { readonly _tag: string; readonly reason?: unknown } | undefined
  readonly events: ReadonlyArray<TurnEvent>
  readonly nextReply: string
}

/** An agent folder whose sessions live on a tiny disk of their own, and a way to fill it and free it again. */
const folderOnTinyDisk = (baseURL: string) =>
  Effect.gen(function*() {
    const dir = NodePath.join(makeTempDir(), "agent")
    writeFiles(dir, { ".kern/config.json": JSON.stringify({ model: "m", baseURL, recall: false }) })
    const sessions = NodePath.join(dir, ".kern", "sessions")
    yield* tinyDisk(sessions)
    const filler = NodePath.join(sessions, "filler")
    return {
      dir,
      fill: Effect.sync(() => expect(fillDisk(filler)).toBe("ENOSPC")),
      free: Effect.sync(() => NodeFs.rmSync(filler))
    }
  })

const text = "y".repeat(12_000)

/** The library: Agent.send. */
const throughAgent = (baseURL: string, reply: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const folder = yield* folderOnTinyDisk(baseURL)
    return yield* Effect.gen(function*() {
      yield* folder.fill
      const events: Array<TurnEvent> = []
      const failure = yield* Effect.flip(Agent.send(text, { onEvent: (event) => Effect.sync(() => events.push(event)) }))
      yield* folder.free
      yield* reply
      const next = yield* Agent.send("after space was freed")
      return { failure: { _tag: failure._tag, reason: "reason" in failure ? failure.reason : undefined }, events, nextReply: next.reply } satisfies Ended
    }).pipe(Effect.provide(Agent.layer({ dir: folder.dir, env })))
  })

/** The running agent: a message submitted to AgentRuntime, its turn run by its turn loop (TurnLoop). */
const throughRuntime = (baseURL: string, reply: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const folder = yield* folderOnTinyDisk(baseURL)
    const layer = servingRuntimeLayer.pipe(
      Layer.provideMerge(agentRuntimeLayer(folder.dir, { command: "kern test", waitSeconds: 0 })),
      Layer.provide(Layer.succeed(ProcessEnv, env)),
      Layer.provide(NodeContext.layer)
    )
    const runtime = Context.get(yield* Layer.build(layer), AgentRuntime)
    const subscription = yield* PubSub.subscribe(runtime.events)
    const turn = (turnId: string) => turnEvents(subscription, turnId)
    yield* folder.fill
    const failed = yield* runtime.submit({ interface: "library", channel: "library", userId: "operator", text })
    const events = yield* turn(failed.turnId)
    yield* folder.free
    yield* reply
    const next = yield* runtime.submit({ interface: "library", channel: "library", userId: "operator", text: "after space was freed" })
    const done = (yield* turn(next.turnId)).at(-1)
    const error = events.find((event) => event.type === "error")
    return {
      failure: error?.type === "error" ? { _tag: error.failure._tag, reason: "reason" in error.failure ? error.failure.reason : undefined } : undefined,
      events,
      nextReply: done?.type === "finish" ? done.reply : ""
    } satisfies Ended
  })

describe("runTurn: the one driver of a turn", () => {
  it.scopedLive("a session that cannot be written ends the turn the same way through Agent.send and the running agent", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const reply = server.reply(FakeReply.text("answered"))
      const drivers = { agent: throughAgent, runtime: throughRuntime }
      for (const [name, drive] of Object.entries(drivers)) {
        const ended = yield* drive(server.baseURL, reply)
        // One clear failure as a value (never a raw SessionError), and the caller sees the turn's error and finish.
        expect(ended.failure, name).toEqual({ _tag: "SessionNotWritten", reason: "disk-full" })
        expect(ended.events.map((event) => event.type), name).toEqual(["incoming", "error", "finish"])
        expect(ended.events[2], name).toMatchObject({ type: "finish", reply: "", delivered: false, steps: 0 })
        for (const event of ended.events) expect(event, name).toMatchObject({ turnId: ended.events[0]?.turnId, conversationId: "library:library" })
        // The agent goes on: the next message is answered once there is room.
        expect(ended.nextReply, name).toBe("answered")
      }
      expect((yield* server.modelRequests).length).toBe(2)
    }))
})
