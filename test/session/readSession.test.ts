import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Exit, Fiber, Option } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { AssistantMessage, SessionHeader, ToolResultMessage, UserMessage } from "../../src/session/messages.js"
import { parseSession } from "../../src/session/parse.js"
import { readSession, readSessionFrom } from "../../src/session/readSession.js"
import { lineOf } from "../../src/session/SessionStore.js"
import { makeTempDir } from "../support/tempDir.js"

const at = "2026-11-22T10:00:00.000Z"
const header = lineOf(new SessionHeader({ version: 1, id: "s", createdAt: at, agent: "a" }))

/** A session file of `steps` exchanges, one tool result `longResult` characters long (ü: two bytes each), a torn tail. */
const sessionText = (steps: number, longResult: number) => {
  const lines = [header]
  for (let i = 0; i < steps; i++) {
    lines.push(lineOf(new UserMessage({ text: `question ${i}: what changed in the router config? äö`, at })))
    lines.push(lineOf(new AssistantMessage({ text: "Let me look.", toolCalls: [{ id: `c${i}`, name: "read", params: { path: "notes/router.md" } }], at })))
    const result = i === Math.floor(steps / 2) ? "ü".repeat(longResult) : `# router\nDHCP range .100-.200, step ${i}`
    lines.push(lineOf(new ToolResultMessage({ toolCallId: `c${i}`, toolName: "read", isError: false, result, at })))
    lines.push(lineOf(new AssistantMessage({ text: `answer ${i}`, at })))
  }
  return `${lines.join("")}{"_tag":"user","te`
}

const withFile = <A, E>(text: string, use: (path: string) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const dir = makeTempDir("kern-read-session-")
      NodeFs.writeFileSync(NodePath.join(dir, "s.jsonl"), text)
      return dir
    }),
    (dir) => use(NodePath.join(dir, "s.jsonl")),
    (dir) => Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
  )

const openDescriptors = () => NodeFs.readdirSync("/proc/self/fd").length

describe("readSession", () => {
  it.effect("reads a file of several chunks, a line longer than a chunk among them, as parsing its whole text does", () =>
    // ~3.5 MB: lines cross every 1 MiB boundary, and one result alone (1.2 MiB of two-byte characters) spans two reads.
    withFile(sessionText(9_000, 600_000), (path) =>
      Effect.gen(function*() {
        const text = NodeFs.readFileSync(path)
        assert.isAbove(text.length, 3 * (1 << 20))
        const read = Either.getOrThrow(yield* readSession(path, "s.jsonl"))
        const whole = Either.getOrThrow(parseSession(text, "s.jsonl"))
        assert.strictEqual(read.messages.length, whole.messages.length)
        assert.strictEqual(read.messageLines, 36_000)
        assert.deepStrictEqual(
          read.messages.map((m) => m._tag === "tool" ? `${m.toolCallId}:${String(m.result).length}` : lineOf(m)),
          whole.messages.map((m) => m._tag === "tool" ? `${m.toolCallId}:${String(m.result).length}` : lineOf(m))
        )
        assert.strictEqual(read.validBytes, whole.validBytes)
        assert.strictEqual(read.tornBytes, Buffer.byteLength("{\"_tag\":\"user\",\"te"))
        assert.deepStrictEqual(read.problems, whole.problems)
        const offsets = (parsed: typeof read) => parsed.messages.flatMap((m) => m._tag === "user" ? [parsed.positions.get(m)?.byteOffset] : [])
        assert.deepStrictEqual(offsets(read), offsets(whole))
        // Each offset is where its line starts in the file.
        const last = read.messages.findLast((m) => m._tag === "user")!
        const offset = read.positions.get(last)!.byteOffset
        assert.strictEqual(text.toString("utf8", offset, offset + 30), lineOf(last).slice(0, 30))
      })))

  it.effect("reads from a context cut as from the start, and says none when the file is not the one the cut was made in", () =>
    withFile(sessionText(9_000, 600_000), (path) =>
      Effect.gen(function*() {
        const whole = Either.getOrThrow(yield* readSession(path, "s.jsonl"))
        const cut = whole.messages.filter((m) => m._tag === "user")[7_000]!
        const position = whole.positions.get(cut)!
        const from = { messageIndex: whole.messages.indexOf(cut), byteOffset: position.byteOffset, linesBefore: position.linesBefore, at }
        const tail = Option.getOrThrow(yield* readSessionFrom(path, "s.jsonl", from))
        assert.strictEqual(tail.messages.length, whole.messages.length - from.messageIndex)
        assert.deepStrictEqual(tail.messages.map((m) => m._tag), whole.messages.slice(from.messageIndex).map((m) => m._tag))
        assert.strictEqual(tail.validBytes, whole.validBytes)
        assert.strictEqual(tail.messageLines, whole.messageLines)
        // An offset inside a line, past the end, or a line of another time: none.
        assert.isTrue(Option.isNone(yield* readSessionFrom(path, "s.jsonl", { ...from, byteOffset: from.byteOffset + 3 })))
        assert.isTrue(Option.isNone(yield* readSessionFrom(path, "s.jsonl", { ...from, byteOffset: 1 << 30 })))
        assert.isTrue(Option.isNone(yield* readSessionFrom(path, "s.jsonl", { ...from, at: "2026-01-01T00:00:00.000Z" })))
      })))

  it.effect("lets the event loop run between two chunks, and stops at an interrupt there with the file closed", () =>
    withFile(sessionText(9_000, 0), (path) =>
      Effect.gen(function*() {
        const before = openDescriptors()
        // An immediate queued before the load: it runs only if the load gives the event loop a turn (a SIGTERM's
        // handler waits for the same turn).
        let turns = 0
        const ran = Effect.async<void>((resume) => {
          const handle = setImmediate(() => {
            turns++
            resume(Effect.void)
          })
          return Effect.sync(() => clearImmediate(handle))
        })
        let turnsWhenDone = -1
        const whole = yield* Effect.zipRight(Effect.fork(ran), readSession(path, "s.jsonl").pipe(Effect.tap(() => {
          turnsWhenDone = turns
        })))
        assert.isTrue(Either.isRight(whole))
        assert.strictEqual(turnsWhenDone, 1)
        // Interrupted at its first turn of the event loop: the fiber ends interrupted and the descriptor is closed.
        const fiber = yield* Effect.fork(readSession(path, "s.jsonl"))
        yield* Effect.yieldNow()
        yield* Effect.async<void>((resume) => {
          setImmediate(() => resume(Effect.void))
        })
        const exit = yield* Fiber.interrupt(fiber)
        assert.isTrue(Exit.isInterrupted(exit))
        assert.strictEqual(openDescriptors(), before)
      })))

  it.effect("fails with what the system said for a file it cannot read", () =>
    Effect.gen(function*() {
      const dir = makeTempDir("kern-read-session-")
      try {
        const folder = yield* Effect.flip(readSession(dir, "s.jsonl"))
        assert.strictEqual(folder._tag, "SessionFileError")
        assert.include(folder.message, "EISDIR")
        const missing = yield* Effect.flip(readSession(NodePath.join(dir, "gone.jsonl"), "gone.jsonl"))
        assert.strictEqual(missing.operation, "open")
        assert.include(missing.message, "ENOENT")
      } finally {
        NodeFs.rmSync(dir, { recursive: true, force: true })
      }
    }))
})
