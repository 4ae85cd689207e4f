import * as MediaStore from "../../src/media/MediaStore.js"
import * as Transcriber from "../../src/media/Transcriber.js"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as AgentConfig from "../../src/config/AgentConfig.js"
import { agentPaths } from "../../src/config/paths.js"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import * as Kernel from "../../src/kernel/Kernel.js"
import { ToolExecutor } from "../../src/kernel/ToolExecutor.js"
import { Recall } from "../../src/recall/Recall.js"
import * as RecallLayers from "../../src/recall/layers.js"
import * as Channels from "../../src/tools/Channels.js"
import { ScheduleStore } from "../../src/tools/schedules/ScheduleStore.js"
import * as Database from "../../src/storage/Database.js"
import * as Builtins from "../../src/tools/builtins.js"
import * as ToolServices from "../../src/tools/ToolServices.js"
import { PairingStore } from "../../src/users/PairingStore.js"
import { inRun } from "../kernel/harness.js"
import { answer, appendLines, callTool, header, makeAgentDir, sessionPath, toolResult, user } from "../recall/harness.js"
import { writeFiles } from "../support/tempDir.js"

const past = "20260101-100000-000-aaaa"
const current = "20260301-100000-000-bbbb"

/** An agent with a past session and a current one, its built-in tools registered over a kernel on its kern.db. */
const agent = (config: Record<string, unknown> = {}) => {
  const dir = makeAgentDir()
  writeFiles(dir, { ".kern/config.json": JSON.stringify({ model: "m", embeddingModel: false, ...config }) })
  appendLines(
    sessionPath(dir, past),
    header(past),
    user("what is the wifi password for the guest network?", "2026-01-10T09:00:00.000Z"),
    callTool("c1", "read", { path: "knowledge/wifi.md" }, "2026-01-10T09:00:01.000Z"),
    toolResult("c1", "read", `guest network: ${"w".repeat(9_980)} password hunter2`, "2026-01-10T09:00:02.000Z"),
    answer("The guest wifi password is hunter2.", "2026-01-10T09:00:03.000Z")
  )
  appendLines(sessionPath(dir, current), header(current), user("and the guest wifi again?"), answer("checking"))
  const platform = Layer.mergeAll(NodeContext.layer, Layer.succeed(ProcessEnv, {}))
  const loaded = AgentConfig.layer(dir).pipe(Layer.provideMerge(platform))
  const db = Database.layer({ filename: agentPaths(dir).dbFile }).pipe(Layer.provideMerge(loaded))
  const kernel = Kernel.layer({ safetyMode: "SAFE", approvalMode: "deny", contractEnforcement: "off" }).pipe(
    Layer.provideMerge(KnownSecrets.layer),
    Layer.provideMerge(db)
  )
  const tools = Layer.mergeAll(ToolServices.layer, PairingStore.Default, RecallLayers.layer, Channels.layer, ScheduleStore.Default, MediaStore.layer.pipe(Layer.provide(Transcriber.layerOff("no transcription in this test")))).pipe(Layer.provideMerge(kernel))
  return Builtins.layer.pipe(Layer.provideMerge(tools), Layer.orDie)
}

const call = (args: unknown) =>
  Effect.flatMap(ToolExecutor, (executor) => inRun(executor.execute("recall", args), { sessionId: current }))

const text = (result: { readonly data?: unknown }) => (result.data as { readonly text: string }).text

describe("recall tool", () => {
  it.live("search finds past sessions (not the one in context), load pages a long range without cutting a message", () =>
    Effect.gen(function*() {
      yield* Effect.flatMap(Recall, (recall) => recall.sync)
      const found = yield* call({ query: "guest wifi password" })
      expect(found.success, found.errorMessage).toBe(true)
      // The current session is in the context: only the past one is offered.
      expect(text(found)).toMatch(/^1\. session 20260101-100000-000-aaaa messages 0-3 \(2026-01-10 09:00 → 2026-01-10 09:00\)/)
      expect(text(found)).not.toContain(current)
      // The model is told which of its tools reads the rest, with the arguments to give it.
      const more = /more characters: recall (\{.*\}) reads the messages whole\]/.exec(text(found))
      expect(more, text(found)).not.toBeNull()
      const loadArgs = JSON.parse(more![1]!)
      expect(loadArgs).toEqual({ mode: "load", sessionId: past, messageStart: 0, messageEnd: 3 })
      const followed = yield* call(loadArgs)
      expect(followed.success, followed.errorMessage).toBe(true)
      expect(text(followed)).toContain("[0] user (2026-01-10 09:00):\nwhat is the wifi password")
      expect(text(found)).toContain("keyword search only")

      const first = yield* call({ mode: "load", sessionId: past, messageStart: 0, messageEnd: 3 })
      expect(first.success, first.errorMessage).toBe(true)
      // The 10,000-character result does not fit beside the others in a 10,000-character page: it opens the next one.
      expect(text(first)).toContain("[0] user (2026-01-10 09:00):\nwhat is the wifi password")
      expect(text(first)).toContain("[1] assistant")
      expect(text(first)).toContain("load again with messageStart 2")
      // Following the pages to the end gives every message once, whole.
      const seen: Array<{ readonly index: number; readonly text: string }> = []
      let start: number | null = 0
      while (start !== null) {
        const page = yield* call({ mode: "load", sessionId: past, messageStart: start, messageEnd: 3 })
        const data = page.data as { messages: Array<{ index: number; text: string }>; nextMessageStart: number | null }
        seen.push(...data.messages)
        start = data.nextMessageStart
      }
      expect(seen.map((m) => m.index)).toEqual([0, 1, 2, 3])
      expect(seen[2]!.text).toBe(`guest network: ${"w".repeat(9_980)} password hunter2`)
    }).pipe(Effect.provide(agent())))

  it.live("seed 000's load form, { sessionId, messageStart, messageEnd } without a mode, loads the range", () =>
    Effect.gen(function*() {
      yield* Effect.flatMap(Recall, (recall) => recall.sync)
      const seedForm = yield* call({ sessionId: past, messageStart: 0, messageEnd: 3 })
      expect(seedForm.success, seedForm.errorMessage).toBe(true)
      const explicit = yield* call({ mode: "load", sessionId: past, messageStart: 0, messageEnd: 3 })
      expect(text(seedForm)).toBe(text(explicit))
      expect(text(seedForm)).toContain("[0] user (2026-01-10 09:00):\nwhat is the wifi password")
      const partial = yield* call({ sessionId: past, messageStart: 0 })
      expect(partial.errorMessage).toContain("load needs sessionId, messageStart and messageEnd")
    }).pipe(Effect.provide(agent())))

  it.live("bad arguments are VALIDATION_ERROR naming what is wrong; an unknown range is NOT_FOUND", () =>
    Effect.gen(function*() {
      yield* Effect.flatMap(Recall, (recall) => recall.sync)
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{}, "search needs a query"],
        [{ query: "" }, "query"],
        [{ query: "x", limit: 0 }, "limit"],
        [{ query: "x", after: "last tuesday" }, "after"],
        [{ mode: "load", sessionId: past, messageStart: 0 }, "load needs sessionId, messageStart and messageEnd"],
        [{ mode: "load", sessionId: past, messageStart: 3, messageEnd: 1 }, "messageEnd (1) is before messageStart (3)"],
        [{ mode: "load", sessionId: past, messageStart: -1, messageEnd: 1 }, "messageStart"],
        [{ mode: "forget", query: "x" }, "mode"]
      ]
      for (const [args, named] of cases) {
        const result = yield* call(args)
        expect(result.errorCode, JSON.stringify(args)).toBe("VALIDATION_ERROR")
        expect(result.errorMessage).toContain(named)
      }
      const missing = yield* call({ mode: "load", sessionId: "nope", messageStart: 0, messageEnd: 2 })
      expect(missing.errorCode).toBe("NOT_FOUND")
    }).pipe(Effect.provide(agent())))

  it.live("not offered when recall is off", () =>
    Effect.gen(function*() {
      const result = yield* call({ query: "wifi" })
      expect(result.errorCode).toBe("NOT_FOUND")
    }).pipe(Effect.provide(agent({ recall: false }))))
})
