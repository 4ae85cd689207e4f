import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Layer, Schema, TestClock } from "effect"
import * as fc from "fast-check"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { journalFolder } from "../../src/kernel/auditJournal.js"
import * as EventLog from "../../src/kernel/EventLog.js"
import { type EventFields, lineAt, valuesAt } from "../../src/kernel/eventRows.js"
import { argsDigest, canonicalJson, sha256 } from "../../src/kernel/fingerprint.js"
import { ToolExecutor } from "../../src/kernel/ToolExecutor.js"
import { ToolRegistry } from "../../src/kernel/ToolRegistry.js"
import * as Database from "../../src/storage/Database.js"
import { makeTempDir } from "../support/tempDir.js"
import { inRun, kernelLayer } from "./harness.js"

// Texts as a model, a tool or an error message may give them: quotes, backslashes, control characters, emoji and
// lone surrogates (which JSON.stringify writes escaped) among ordinary ones.
const text = fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.constantFrom("", "\"", "\\", "\n", "\u2028", "\ud800", "a\udc00b", "😀"))
const maybeText = fc.option(text, { nil: undefined }).chain((value) => fc.constantFrom(value, null))
const maybeNumber = fc.option(fc.oneof(fc.double(), fc.integer(), fc.constantFrom(-0, NaN, Infinity, 1e21)), { nil: undefined })
  .chain((value) => fc.constantFrom(value, null))

const eventFields: fc.Arbitrary<Omit<EventFields, "tsMs">> = fc.record({
  decisionKey: text,
  runId: text,
  traceId: text,
  sessionId: fc.option(text, { nil: undefined }),
  toolId: maybeText,
  argsDigest: maybeText,
  status: text,
  errorCode: maybeText,
  errorMessage: maybeText,
  latencyMs: maybeNumber,
  retries: maybeNumber,
  contractFingerprint: maybeText,
  registeredFingerprint: maybeText,
  contractStatus: maybeText,
  contractEnforcement: maybeText,
  contractMismatch: fc.constantFrom(undefined, null, true, false),
  detail: maybeText
})

describe("an audit event's journal line", () => {
  it("is the JSON of its values, newline ended, whatever its texts and numbers hold; the values are what it reads back as", () => {
    fc.assert(
      fc.property(eventFields, fc.integer({ min: 0, max: 2 ** 52 }), maybeText, maybeText, (event, tsMs, errorMessage, detail) => {
        const values = valuesAt(event, tsMs, errorMessage, detail)
        const line = lineAt(event, tsMs, errorMessage, detail)
        expect(line).toBe(`${JSON.stringify(values)}\n`)
        // The values bound from memory (pendingRows.ts) and the line read back from the journal make the same row.
        expect(JSON.parse(line)).toEqual(values)
      }),
      { numRuns: 2_000 }
    )
  })
})

/** The straightforward definition canonicalJson is written faster than: every value's keys sorted, through arrays. */
const canonicalReference = (value: unknown): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) return `[${value.map(canonicalReference).join(",")}]`
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).filter((key) => record[key] !== undefined).sort()
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalReference(record[key])}`).join(",")}}`
}

describe("the canonical JSON of tool arguments", () => {
  it("is the sorted-keys JSON of the value at every depth (sparse arrays, undefined values, odd keys included)", () => {
    fc.assert(
      fc.property(
        fc.anything({ withSparseArray: true, withNullPrototype: true, withDate: true, withMap: true, withTypedArray: true, withObjectString: true }),
        (value) => {
          expect(canonicalJson(value)).toBe(canonicalReference(value))
        }
      ),
      { numRuns: 5_000 }
    )
  })

  it("gives the digest the audit log has always stored", () => {
    expect(argsDigest({ n: 1 })).toBe(`sha256:${sha256("{\"n\":1}").slice(0, 32)}`)
    expect(argsDigest({ b: [1, { d: undefined, c: "x" }], a: null })).toBe(`sha256:${sha256("{\"a\":null,\"b\":[1,{\"c\":\"x\"}]}").slice(0, 32)}`)
  })
})

const Args = Schema.Struct({ n: Schema.Number })

describe("a tool call's audit event", () => {
  it.scoped("is in the journal when the call returns, before any batch moves it to kern.db, at the call's end by its Clock", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      const file = NodePath.join(dir, ".kern", "kern.db")
      const eventLog = EventLog.layerSql.pipe(Layer.provide(Layer.merge(Database.layer({ filename: file }), KnownSecrets.layerNone)))
      const context = yield* Layer.build(kernelLayer({ eventLog }))
      const calls = Effect.gen(function*() {
        const registry = yield* ToolRegistry
        const executor = yield* ToolExecutor
        yield* registry.register({ toolId: "test.wait", name: "Wait" }, {
          parameters: Args,
          handler: (args) => Effect.as(Effect.sleep(`${args.n} seconds`), args.n)
        })
        const journaled = () =>
          NodeFs.readdirSync(journalFolder(file)).flatMap((name) =>
            NodeFs.readFileSync(NodePath.join(journalFolder(file), name), "utf8").split("\n").filter((line) => line !== "")
              .map((line) => JSON.parse(line) as ReadonlyArray<unknown>)
          )
        const started = yield* TestClock.currentTimeMillis
        // Three calls at once, each ending at its own time: each is journaled by the time its result is back.
        const running = yield* Effect.fork(Effect.forEach([3, 1, 2], (n) =>
          Effect.tap(executor.execute("test.wait", { n }), () => {
            const lines = journaled()
            expect(lines.filter((values) => values[5] === "test.wait" && values[10] === n * 1000)).toEqual([
              expect.arrayContaining([started + n * 1000, "kernel.tool.dispatch", argsDigest({ n }), "ok"])
            ])
          }), { concurrency: "unbounded" }))
        // Once the three handlers sleep, the clock moves past them all.
        yield* Effect.repeat(Effect.zipRight(Effect.yieldNow(), TestClock.sleeps()), {
          until: (sleeps) => [1, 2, 3].every((n) => Chunk.some(sleeps, (at) => at === started + n * 1000))
        })
        yield* TestClock.adjust("3 seconds")
        const results = yield* Fiber.join(running)
        expect(results.map((result) => result.success)).toEqual([true, true, true])
        expect(journaled()).toHaveLength(3)
      })
      yield* inRun(calls).pipe(Effect.provide(context))
    }))
})
