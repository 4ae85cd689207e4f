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
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { fillDisk, tinyDisk } from "../support/tinyDisk.js"

const storeLayer = (dir: string) =>
  SessionStore.Default.pipe(
    Layer.provideMerge(SessionIndex.layer),
    Layer.provide(KnownSecrets.layer),
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
  it.scoped("each conversation has its own newest session: a friend's new session does not end the operator's", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore
      const operator = yield* store.create
      yield* TestClock.adjust("1 second")
      const friend = yield* store.createIn("telegram-42")
      yield* TestClock.adjust("1 second")
      const group = yield* store.createIn("telegram--1001")
      assert.match(friend, /^\d{8}-\d{6}-\d{3}-[0-9a-f]{4}_telegram-42$/)
      const activeOf = (conversation: string) =>
        Effect.map(store.activeIdIn(conversation), (id) => id._tag === "Some" ? id.value : null)
      assert.strictEqual(yield* activeOf("main"), operator)
      assert.strictEqual(yield* activeOf("telegram-42"), friend)
      assert.strictEqual(yield* activeOf("telegram--1001"), group)
      assert.strictEqual(yield* activeOf("slack-D1"), null)
      // Opening a conversation's active session starts one when it has none, named for it.
      const { loaded } = yield* store.openActive({ conversation: "slack-D1" })
      assert.match(loaded.id, /_slack-D1$/)
      const listed = yield* store.list
      assert.deepStrictEqual(
        listed.map((s) => [s.conversation, s.active]),
        [["main", true], ["telegram-42", true], ["telegram--1001", true], ["slack-D1", true]]
      )
      yield* TestClock.adjust("1 second")
      const newer = yield* store.create
      assert.deepStrictEqual((yield* store.list).filter((s) => s.active).map((s) => s.id).sort(), [friend, group, loaded.id, newer].sort())
    }).pipe(Effect.provide(storeLayer(agentDir()))))

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

describe("SessionStore, files it did not write", () => {
  const linesOf = (path: string) => NodeFs.readFileSync(path, "utf8").split("\n")

  it.scoped("a complete last line it cannot decode (a newer kern's) is kept on disk and skipped; appends go after it", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore
      const id = yield* store.create
      const path = NodePath.join(store.dir, `${id}.jsonl`)
      const newer = "{\"_tag\":\"segment\",\"from\":1,\"to\":9}"
      NodeFs.appendFileSync(path, `${JSON.stringify({ _tag: "user", text: "before", at })}\n${newer}`)
      const { problems, writer } = yield* store.openActive()
      assert.match(problems.join("\n"), /line 3 is not a line this kern knows.*kept in the file/)
      yield* writer.append(user("after"))
      const lines = linesOf(path)
      assert.strictEqual(lines[2], newer)
      assert.strictEqual(JSON.parse(lines[3]!).text, "after")
      const loaded = yield* store.load(id)
      assert.deepStrictEqual(loaded.messages.map((m) => m._tag === "user" ? m.text : ""), ["before", "after"])
      assert.strictEqual(loaded.tornBytes, 0)
    }).pipe(Effect.provide(storeLayer(agentDir()))))

  it.scoped("an empty newest session gets its header back and is used", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore
      const id = yield* store.create
      const path = NodePath.join(store.dir, `${id}.jsonl`)
      NodeFs.writeFileSync(path, "")
      const opened = yield* store.openActive()
      assert.strictEqual(opened.loaded.id, id)
      assert.match(opened.problems.join("\n"), /had no session header and no messages; a header was written/)
      yield* opened.writer.append(user("hello"))
      const again = yield* store.load(id)
      assert.strictEqual(again.header.id, id)
      assert.strictEqual(again.messages.length, 1)
    }).pipe(Effect.provide(storeLayer(agentDir()))))

  it.scoped("a header-less newest session is set aside, a new one starts, and the next open uses that one", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore
      const id = yield* store.create
      const path = NodePath.join(store.dir, `${id}.jsonl`)
      const foreign = `${JSON.stringify({ _tag: "user", text: "whose?", at })}\n`
      NodeFs.writeFileSync(path, foreign)
      yield* TestClock.adjust("1 second")
      const opened = yield* store.openActive()
      assert.notStrictEqual(opened.loaded.id, id)
      assert.match(opened.problems.join("\n"), /not a kern session.*set aside as .*\.jsonl\.unreadable, and a new session .* started/)
      assert.strictEqual(NodeFs.readFileSync(`${path}.unreadable`, "utf8"), foreign)
      assert.isFalse(NodeFs.existsSync(path))
      const next = yield* store.openActive()
      assert.strictEqual(next.loaded.id, opened.loaded.id)
      assert.deepStrictEqual(next.problems, [])
      assert.deepStrictEqual((yield* store.list).map((s) => s.id), [opened.loaded.id])
    }).pipe(Effect.provide(storeLayer(agentDir()))))
})

/** A session of two messages, its count record's path and the record as written. */
const sessionOfTwo = Effect.gen(function*() {
  const store = yield* SessionStore
  const id = yield* store.create
  yield* Effect.scoped(Effect.flatMap(store.open(id), ({ writer }) => Effect.zipRight(writer.append(user("one")), writer.append(user("two")))))
  const record = SessionIndex.recordFile(NodePath.join(store.dir, "..", "session-counts"), id)
  return { store, id, record, whole: NodeFs.readFileSync(record, "utf8") }
})

describe("SessionStore counts in .kern/session-counts", () => {
  it.scoped("list reads counts from the index, kept on append, without reading the files", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore
      const { writer } = yield* store.openActive()
      const path = writer.path
      const records = SessionIndex.make(NodePath.join(store.dir, "..", "session-counts"))
      for (let i = 0; i < 20; i++) {
        yield* writer.append(user(`m${i}`))
        // The record's mtime is the file's as a list stats it (whole milliseconds, rounded as Node's Date has them).
        const [record] = yield* records.all
        assert.strictEqual(record?.mtimeMs, NodeFs.statSync(path).mtime.getTime())
      }
      assert.deepStrictEqual((yield* store.list).map((s) => [s.messages, s.bytes]), [[20, NodeFs.statSync(path).size]])
      // Same size, same mtime, other bytes: a list that read the file would see the garbage.
      const { mtime, size } = NodeFs.statSync(path)
      NodeFs.writeFileSync(path, "x".repeat(size))
      NodeFs.utimesSync(path, mtime, mtime)
      assert.deepStrictEqual((yield* store.list).map((s) => s.messages), [20])
    }).pipe(Effect.provide(storeLayer(agentDir()))))

  it.scoped("the count is rebuilt from the file when the file changed behind kern's back, or the record is missing", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore
      const id = yield* store.create
      const path = NodePath.join(store.dir, `${id}.jsonl`)
      yield* Effect.scoped(Effect.flatMap(store.open(id), ({ writer }) => writer.append(user("one"))))
      assert.deepStrictEqual((yield* store.list).map((s) => s.messages), [1])
      NodeFs.appendFileSync(path, `${JSON.stringify({ _tag: "user", text: "two", at })}\n${JSON.stringify({ _tag: "user", text: "three", at })}\n`)
      const listed = yield* store.list
      assert.deepStrictEqual(listed.map((s) => [s.messages, s.bytes]), [[3, NodeFs.statSync(path).size]])
      const index = yield* SessionIndex.SessionIndex
      yield* index.remove(id)
      assert.deepStrictEqual((yield* store.list).map((s) => s.messages), [3])
      assert.deepStrictEqual((yield* index.all).map((r) => [r.sessionId, r.messages]), [[id, 3]])
    }).pipe(Effect.provide(storeLayer(agentDir()))))

  it.scoped("a damaged or half-written count record is counted again from the session and written whole", () =>
    Effect.gen(function*() {
      const { store, id, record, whole } = yield* sessionOfTwo
      assert.deepStrictEqual(JSON.parse(whole).messages, 2)
      for (const damaged of ["", whole.slice(0, 20), "{\"messages\":\"two\"}", "not json"]) {
        NodeFs.writeFileSync(record, damaged)
        assert.deepStrictEqual((yield* store.list).map((s) => s.messages), [2])
        assert.deepStrictEqual(JSON.parse(NodeFs.readFileSync(record, "utf8")).messages, 2)
      }
      // A stray temporary file is not a record; the folder keeps itself out of git.
      NodeFs.writeFileSync(`${record}.123.tmp`, "{")
      assert.deepStrictEqual((yield* (yield* SessionIndex.SessionIndex).all).map((r) => r.sessionId), [id])
      assert.strictEqual(NodeFs.readFileSync(NodePath.join(NodePath.dirname(record), ".gitignore"), "utf8"), "*\n")
    }).pipe(Effect.provide(storeLayer(agentDir()))))

  it.scoped("a record rewritten in place and met half written (its counts torn from its check) is counted again", () =>
    Effect.gen(function*() {
      const { store, id, record, whole } = yield* sessionOfTwo
      // The older write's count with the newer write's size and mtime: valid JSON, matching the file, and wrong.
      const torn = whole.replace("\"messages\":2", "\"messages\":1")
      assert.notStrictEqual(torn, whole)
      for (const damaged of [torn, torn.trimEnd(), `${whole.slice(0, 40)}${torn.slice(40)}`]) {
        NodeFs.writeFileSync(record, damaged)
        assert.deepStrictEqual((yield* store.list).map((s) => s.messages), [2])
        assert.strictEqual(NodeFs.readFileSync(record, "utf8"), whole)
      }
      // A longer leftover (a record of an older kern, or a longer createdAt) is cut off, not left as a tail.
      NodeFs.writeFileSync(record, `${whole}${"x".repeat(300)}`)
      yield* Effect.scoped(Effect.flatMap(store.open(id), ({ writer }) => writer.append(user("three"))))
      assert.deepStrictEqual((yield* store.list).map((s) => s.messages), [3])
      assert.deepStrictEqual((yield* (yield* SessionIndex.SessionIndex).all).map((r) => r.messages), [3])
    }).pipe(Effect.provide(storeLayer(agentDir()))))

  it.effect("the index of a folder with no sessions yet is empty", () =>
    Effect.map(SessionIndex.make(NodePath.join(makeTempDir(), "none")).all, (records) => assert.deepStrictEqual(records, [])))
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

const texts = (messages: ReadonlyArray<{ readonly _tag: string }>) => messages.map((m) => m instanceof UserMessage ? m.text : m._tag)

describe("a failed append leaves the session file as it was", () => {
  it.scoped("with the disk full, the append fails as disk-full, the file keeps its whole lines, and the next message is kept", () =>
    Effect.gen(function*() {
      const dir = agentDir()
      yield* tinyDisk(NodePath.join(dir, ".kern", "sessions"))
      const outcome = yield* Effect.gen(function*() {
        const store = yield* SessionStore
        const id = yield* store.create
        const { writer } = yield* store.open(id)
        yield* writer.append(user("before the disk filled"))
        const goodSize = NodeFs.statSync(writer.path).size
        const filler = NodePath.join(store.dir, "filler")
        assert.strictEqual(fillDisk(filler), "ENOSPC")
        // Longer than what is left of the file's last page: part of it is written, then ENOSPC.
        const failed = yield* Effect.either(writer.append(user("x".repeat(12_000))))
        const sizeAfterFailure = NodeFs.statSync(writer.path).size
        NodeFs.rmSync(filler)
        yield* writer.append(user("after space was freed"))
        return { failed, goodSize, sizeAfterFailure, id }
      }).pipe(Effect.provide(storeLayer(dir)), Effect.scoped)
      assert.isTrue(Either.isLeft(outcome.failed))
      const error = Either.isLeft(outcome.failed) ? outcome.failed.left : undefined
      assert.strictEqual(error?.reason, "disk-full")
      assert.match(error?.message ?? "", /disk full/)
      assert.strictEqual(outcome.sizeAfterFailure, outcome.goodSize, "the half-written line was cut off")
      const loaded = yield* Effect.flatMap(SessionStore, (store) => store.load(outcome.id)).pipe(Effect.provide(storeLayer(dir)))
      assert.deepStrictEqual(texts(loaded.messages), ["before the disk filled", "after space was freed"])
      assert.deepStrictEqual(loaded.problems, [])
    }))

  it.scoped("a file cut mid-line while the session is open: the next message is appended after the last whole line", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore
      const id = yield* store.create
      const { writer } = yield* store.open(id)
      yield* writer.append(user("first"))
      yield* writer.append(user("second, cut in half by another program"))
      NodeFs.truncateSync(writer.path, NodeFs.statSync(writer.path).size - 20)
      yield* writer.append(user("third"))
      yield* writer.append(user("fourth"))
      const loaded = yield* store.load(id)
      assert.deepStrictEqual(texts(loaded.messages), ["first", "third", "fourth"])
      assert.deepStrictEqual(loaded.problems, [])
    }).pipe(Effect.provide(storeLayer(agentDir()))))
})
