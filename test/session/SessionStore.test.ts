import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, TestClock } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as AgentConfig from "../../src/config/AgentConfig.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { AssistantMessage, ToolResultMessage, UserMessage } from "../../src/session/messages.js"
import { interruptedResult, parseSession } from "../../src/session/parse.js"
import * as SessionIndex from "../../src/session/SessionIndex.js"
import { SessionStore } from "../../src/session/SessionStore.js"
import * as Database from "../../src/storage/Database.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const storeLayer = (dir: string) =>
  SessionStore.Default.pipe(
    Layer.provide(SessionIndex.layerSql.pipe(Layer.provide(Database.layerMemory))),
    Layer.provide(AgentConfig.layer(dir)),
    Layer.provide(Layer.succeed(ProcessEnv, {})),
    Layer.provideMerge(NodeContext.layer)
  )

const agentDir = () => {
  const dir = NodePath.join(makeTempDir(), "atlas")
  writeFiles(dir, { ".kern/config.json": "{}" })
  return dir
}

const at = "2026-11-22T10:00:00.000Z"
const user = (text: string) => new UserMessage({ text, at })
const callingAssistant = new AssistantMessage({
  text: "let me look",
  toolCalls: [{ id: "c1", name: "read", params: { path: "a" } }, { id: "c2", name: "glob", params: { pattern: "*" } }],
  at
})

describe("SessionStore", () => {
  it.scoped("appends one line per message after a header; the newest session is active", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore
      const first = yield* store.create
      yield* TestClock.adjust("2 seconds")
      const second = yield* store.create
      const { writer } = yield* store.open(second)
      yield* writer.append(user("hello"))
      yield* writer.append(new AssistantMessage({ text: "hi", at }))
      const lines = NodeFs.readFileSync(writer.path, "utf8").trimEnd().split("\n")
      assert.strictEqual(lines.length, 3)
      assert.strictEqual(JSON.parse(lines[0]!)._tag, "session")
      assert.deepStrictEqual(JSON.parse(lines[1]!), { _tag: "user", text: "hello", at })
      const loaded = yield* store.load(second)
      assert.deepStrictEqual(loaded.messages.map((m) => m._tag), ["user", "assistant"])
      assert.strictEqual(loaded.header.agent, "atlas")
      const active = yield* store.activeId
      assert.strictEqual(active._tag === "Some" ? active.value : null, second)
      const summaries = yield* store.list
      assert.deepStrictEqual(summaries.map((s) => [s.id, s.messages, s.active]), [[first, 0, false], [second, 2, true]])
    }).pipe(Effect.provide(storeLayer(agentDir()))))

  it.scoped("a torn trailing line is dropped, reported, and cut off before the next append", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore
      const id = yield* store.create
      const scoped = Effect.scoped(Effect.flatMap(store.open(id), ({ writer }) => writer.append(user("kept"))))
      yield* scoped
      const path = NodePath.join(store.dir, `${id}.jsonl`)
      NodeFs.appendFileSync(path, "{\"_tag\":\"user\",\"text\":\"half a wri")
      const torn = yield* store.load(id)
      assert.deepStrictEqual(torn.messages.map((m) => m._tag === "user" ? m.text : ""), ["kept"])
      assert.isAbove(torn.tornBytes, 0)
      assert.match(torn.problems[0] ?? "", /dropped a torn last line/)
      const { writer } = yield* store.open(id)
      yield* writer.append(user("after repair"))
      NodeFs.appendFileSync(path, JSON.stringify({ _tag: "user", text: "no newline", at }))
      yield* Effect.scoped(Effect.flatMap(store.open(id), (opened) => opened.writer.append(user("last"))))
      const repaired = yield* store.load(id)
      assert.deepStrictEqual(repaired.messages.map((m) => m._tag === "user" ? m.text : ""), ["kept", "after repair", "no newline", "last"])
      assert.deepStrictEqual(repaired.problems, [])
    }).pipe(Effect.provide(storeLayer(agentDir()))))

  it.scoped("a dangling tool call gets a synthetic interrupted result, written once on open", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore
      const id = yield* store.create
      yield* Effect.scoped(Effect.gen(function*() {
        const { writer } = yield* store.open(id)
        yield* writer.append(user("look at a"))
        yield* writer.append(callingAssistant)
        yield* writer.append(new ToolResultMessage({ toolCallId: "c1", toolName: "read", isError: false, result: "x", at }))
      }))
      const loaded = yield* store.load(id)
      assert.deepStrictEqual(loaded.messages.map((m) => m._tag), ["user", "assistant", "tool", "tool"])
      const synthetic = loaded.messages[3]
      assert.isTrue(synthetic?._tag === "tool" && synthetic.toolCallId === "c2" && synthetic.isError)
      assert.strictEqual(synthetic?._tag === "tool" ? synthetic.result : null, interruptedResult)
      yield* store.open(id)
      const reopened = yield* store.load(id)
      assert.strictEqual(reopened.synthesized.length, 0, "the synthetic result is now on disk")
      assert.strictEqual(reopened.messages.length, 4)
    }).pipe(Effect.provide(storeLayer(agentDir()))))

  it.effect("a file without a session header is a SessionError, and an unknown id is named", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore
      yield* Effect.sync(() => {
        NodeFs.mkdirSync(store.dir, { recursive: true })
        NodeFs.writeFileSync(NodePath.join(store.dir, "bogus.jsonl"), "{\"_tag\":\"user\",\"text\":\"x\",\"at\":\"t\"}\n")
      })
      const bogus = yield* Effect.flip(store.load("bogus"))
      assert.include(bogus.message, "not a kern session")
      const missing = yield* Effect.flip(store.load("nope"))
      assert.include(missing.message, "no session \"nope\"")
      const traversal = yield* Effect.flip(store.load("../../etc/passwd"))
      assert.include(traversal.message, "not a session id")
    }).pipe(Effect.provide(storeLayer(agentDir()))))
})

describe("parseSession", () => {
  const header = "{\"_tag\":\"session\",\"version\":1,\"id\":\"s\",\"createdAt\":\"t\",\"agent\":\"a\"}\n"

  it("skips an unreadable middle line and keeps the rest", () => {
    const text = header + "{\"_tag\":\"user\",\"text\":\"one\",\"at\":\"t\"}\n" + "garbage\n" + "{\"_tag\":\"user\",\"text\":\"two\",\"at\":\"t\"}\n"
    const parsed = Either.getOrThrow(parseSession(text, "s.jsonl"))
    assert.deepStrictEqual(parsed.messages.map((m) => m._tag === "user" ? m.text : ""), ["one", "two"])
    assert.match(parsed.problems[0] ?? "", /line 3 could not be read/)
    assert.strictEqual(parsed.tornBytes, 0)
  })

  it("keeps a complete last line that only lacks its newline", () => {
    const text = header + "{\"_tag\":\"user\",\"text\":\"one\",\"at\":\"t\"}"
    const parsed = Either.getOrThrow(parseSession(text, "s.jsonl"))
    assert.strictEqual(parsed.messages.length, 1)
    assert.strictEqual(parsed.tornBytes, 0)
    assert.isTrue(parsed.missingNewline)
  })
})

describe("session ids", () => {
  it.effect("sessions made in the same millisecond still sort in creation order", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore
      const made: Array<string> = []
      for (let i = 0; i < 5; i++) made.push(yield* store.create)
      assert.deepStrictEqual([...made].sort(), made)
      const active = yield* store.activeId
      assert.strictEqual(active._tag === "Some" ? active.value : null, made[4])
      for (const id of made) assert.match(id, /^\d{8}-\d{6}-\d{3}-[0-9a-f]{4}$/)
    }).pipe(Effect.provide(storeLayer(agentDir()))))
})
