import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, PubSub } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { AgentRuntime } from "../../src/runtime/AgentRuntime.js"
import { servingRuntimeLayer } from "../../src/runtime/layers.js"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { turnEvents } from "../support/runtimeTurn.js"
import { fillDisk, tinyDisk } from "../support/tinyDisk.js"

describe("a full disk during a turn", () => {
  it.scopedLive("the turn ends with one clear disk-full error, the session keeps only whole lines, and the next message is answered", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = NodePath.join(makeTempDir(), "agent")
      writeFiles(dir, { ".kern/config.json": JSON.stringify({ model: "m", baseURL: server.baseURL, recall: false }) })
      const sessions = NodePath.join(dir, ".kern", "sessions")
      yield* tinyDisk(sessions)
      const layer = servingRuntimeLayer.pipe(
        Layer.provideMerge(agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 })),
        Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })),
        Layer.provide(NodeContext.layer)
      )
      const runtime = Context.get(yield* Layer.build(layer), AgentRuntime)
      const events = yield* PubSub.subscribe(runtime.events)

      const filler = NodePath.join(sessions, "filler")
      expect(fillDisk(filler)).toBe("ENOSPC")
      const lost = yield* runtime.submit({ interface: "web", channel: "web", userId: "operator", text: "y".repeat(12_000) })
      const failed = yield* turnEvents(events, lost.turnId)
      const error = failed.find((event) => event.type === "error")
      expect(error?.type === "error" ? error.failure : undefined).toMatchObject({ _tag: "SessionNotWritten", reason: "disk-full" })
      expect(error?.type === "error" ? error.message : "").toMatch(/disk full/)
      expect((yield* server.modelRequests).length).toBe(0)
      // Refused, and told so: it leaves the inbox, so no restart answers it late.
      expect((yield* runtime.status).inbox).toBe(0)

      NodeFs.rmSync(filler)
      yield* server.reply(FakeReply.text("answered"))
      const next = yield* runtime.submit({ interface: "web", channel: "web", userId: "operator", text: "after space was freed" })
      const done = (yield* turnEvents(events, next.turnId)).at(-1)
      expect(done).toMatchObject({ type: "finish", reply: "answered" })

      const session = yield* runtime.currentSession
      const lines = NodeFs.readFileSync(session.writer.path, "utf8").split("\n").filter((line) => line !== "")
      expect(lines.map((line) => JSON.parse(line)._tag)).toEqual(["session", "user", "assistant"])
      expect(JSON.parse(lines[1]!).text).toBe("after space was freed")
    }))
})
