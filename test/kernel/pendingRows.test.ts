import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import * as fc from "fast-check"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { journalFolder } from "../../src/kernel/auditJournal.js"
import * as EventLog from "../../src/kernel/EventLog.js"
import { ingestJournal } from "../../src/kernel/journalIngest.js"
import { makeTempDir } from "../support/tempDir.js"
import { type Bound, columns, type EventFields, insertRows, insertValues, lineAt, valuesAt } from "../../src/kernel/eventRows.js"
import { makePendingRows } from "../../src/kernel/pendingRows.js"
import * as Database from "../../src/storage/Database.js"

const event = (n: number, fields: Partial<EventFields> = {}): Omit<EventFields, "tsMs"> => ({
  decisionKey: "kernel.tool.dispatch",
  runId: "run",
  traceId: "trace",
  toolId: "tool",
  argsDigest: `sha256:${n}`,
  status: "ok",
  latencyMs: n,
  ...fields
})

/** A copy of lines of `bytes` bytes each, from byte `from`: the values of line n carry latency n. */
const copyOf = (lines: number, bytes: number, from = 0, max = 100) => {
  const pending = makePendingRows(max, from)
  for (let n = 0; n < lines; n++) pending.add(event(n), 1000 + n, null, null, from + (n + 1) * bytes)
  return pending
}
const latencies = (held: { readonly values: ReadonlyArray<Bound>; readonly rows: number }) =>
  Array.from({ length: held.rows }, (_, row) => held.values[row * columns.length + 10])

describe("an event log's copy of its journal's rows", () => {
  it("hands over the rows from kern.db's offset on when it holds them all, then starts where they end", () => {
    const pending = copyOf(3, 10)
    const held = pending.takeFrom(0)
    expect(held === undefined ? undefined : { latencies: latencies(held), end: held.end }).toEqual({ latencies: [0, 1, 2], end: 30 })
    // Handed over: nothing more until a line is added past them.
    expect(pending.takeFrom(30)).toBeUndefined()
    pending.add(event(3), 1003, null, null, 40)
    expect(pending.takeFrom(30)?.end).toBe(40)
  })

  it("drops the rows another process moved into kern.db, and gives the copy up where kern.db's offset is no line's start", () => {
    const moved = copyOf(4, 10)
    const rest = moved.takeFrom(20)
    expect(rest === undefined ? undefined : latencies(rest)).toEqual([2, 3])

    // Behind the copy (a move that failed after the hand-over), or inside a line: the journal is read instead, until
    // kern.db has caught up with it.
    const behind = copyOf(2, 10, 50)
    expect(behind.takeFrom(40)).toBeUndefined()
    behind.add(event(9), 1009, null, null, 80)
    expect(behind.takeFrom(70)).toBeUndefined()
    behind.caughtUp(80)
    behind.add(event(10), 1010, null, null, 90)
    expect(behind.takeFrom(80)?.rows).toBe(1)
    expect(copyOf(2, 10).takeFrom(15)).toBeUndefined()
  })

  it("gives up past its most rows (kern.db refusing batches must not grow memory) until kern.db catches up", () => {
    const full = copyOf(5, 10, 0, 4)
    expect(full.takeFrom(0)).toBeUndefined()
    full.caughtUp(50)
    full.add(event(5), 1005, null, null, 60)
    expect(full.takeFrom(50)?.rows).toBe(1)
  })
})

/** Texts as a model or a tool may give them, and a few values rows repeat (a run's calls share most columns). */
const text = fc.oneof(fc.constantFrom("a", "b", ""), fc.string(), fc.constantFrom("\"", "\\", "\n", "😀", "\ud800"))
const maybeText = fc.oneof(text, fc.constant(null), fc.constant(undefined))
const maybeNumber = fc.oneof(
  fc.constantFrom(0, 1, 2),
  fc.double(),
  fc.integer(),
  fc.constantFrom(-0, NaN, Infinity, 1e21),
  fc.constant(null),
  fc.constant(undefined)
)
const fields: fc.Arbitrary<Omit<EventFields, "tsMs">> = fc.record({
  decisionKey: fc.constantFrom("kernel.tool.dispatch", "kernel.tool.policy.blocked"),
  runId: fc.constantFrom("run-1", "run-2"),
  traceId: fc.constantFrom("trace"),
  sessionId: fc.constantFrom(undefined, "", "s"),
  toolId: fc.constantFrom("tool.a", "tool.b", null),
  argsDigest: maybeText,
  status: fc.constantFrom("ok", "error"),
  errorCode: fc.constantFrom(null, "TIMEOUT"),
  errorMessage: maybeText,
  latencyMs: maybeNumber,
  retries: fc.constantFrom(0, 1, null),
  contractFingerprint: fc.constantFrom(undefined, "fp"),
  registeredFingerprint: fc.constantFrom(undefined, "rf"),
  contractStatus: fc.constantFrom(undefined, "match"),
  contractEnforcement: fc.constantFrom(undefined, "observe"),
  contractMismatch: fc.constantFrom(undefined, null, true, false),
  detail: maybeText
})
// Runs of one event repeated with its own time, digest and latency, as a run's calls of one tool are, and single ones.
const batch = fc.array(
  fc.tuple(fields, fc.integer({ min: 1, max: 300 }), fc.integer({ min: 0, max: 2 ** 52 })),
  { minLength: 1, maxLength: 8 }
).map((runs) =>
  runs.flatMap(([fields, length, tsMs]) =>
    Array.from({ length }, (_, i) => ({ fields: { ...fields, argsDigest: `${fields.argsDigest ?? ""}${i % 3}`, latencyMs: i }, tsMs: tsMs + i }))
  )
)

describe("rows bound from memory", () => {
  it.effect("are in kern.db as their journal lines would put them there, in the order recorded", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const read = () => sql<Record<string, unknown>>`SELECT ${sql.literal(columns.join(", "))} FROM kernel_events ORDER BY event_id`
      const samples = fc.sample(batch, { numRuns: 25, seed: 55 })
      let statements = 0
      for (const events of samples) {
        const values: Array<Bound> = []
        for (const { fields, tsMs } of events) values.push(...valuesAt(fields, tsMs, fields.errorMessage, fields.detail))
        yield* sql`DELETE FROM kernel_events`
        yield* sql.unsafe(insertRows, [`[${events.map(({ fields, tsMs }) => lineAt(fields, tsMs, fields.errorMessage, fields.detail).slice(0, -1)).join(",")}]`])
        const fromLines = yield* read()
        yield* sql`DELETE FROM kernel_events`
        const insert = insertValues(values, events.length)
        statements += insert.length
        for (const [statement, params] of insert) yield* sql.unsafe(statement, params)
        expect(yield* read()).toEqual(fromLines)
        expect(fromLines).toHaveLength(events.length)
      }
      // The runs were bound with their shared values once: far fewer statements than rows.
      expect(statements).toBeLessThan(samples.reduce((sum, events) => sum + events.length, 0) / 4)
    }).pipe(Effect.provide(Database.layer({ filename: ":memory:" }))))
})

describe("an event log whose journal another process moves too", () => {
  it.scoped("writes each event to kern.db once, in order, whoever moved which part of its journal", () =>
    Effect.gen(function*() {
      const file = NodePath.join(makeTempDir(), ".kern", "kern.db")
      const context = yield* Layer.build(EventLog.layerSql.pipe(Layer.provideMerge(Layer.merge(
        Database.layer({ filename: file }),
        KnownSecrets.layerNone
      ))))
      const log = EventLog.EventLog.pipe(Effect.provide(context))
      const sql = yield* SqlClient.SqlClient.pipe(Effect.provide(context))
      const folder = journalFolder(file)
      let next = 0
      const record = (count: number) =>
        Effect.flatMap(log, (log) =>
          Effect.forEach(Array.from({ length: count }), () =>
            log.record({ decisionKey: "kernel.tool.dispatch", runId: "run", traceId: "trace", status: "ok", latencyMs: next++ }), { discard: true }))
      // Another process reads a running writer's journal as any other: line by line from the file, up to its end.
      const movedElsewhere = Effect.forEach(NodeFs.readdirSync(folder), (name) => ingestJournal(sql, folder, name), { discard: true })
      const flush = Effect.flatMap(log, (log) => log.flush)

      yield* record(10)
      yield* movedElsewhere
      yield* record(5)
      yield* flush
      yield* record(7)
      yield* flush
      yield* record(3)
      yield* movedElsewhere
      yield* movedElsewhere
      yield* flush
      yield* record(300)
      yield* movedElsewhere
      yield* record(2)
      yield* flush
      const rows = yield* sql<{ readonly latency: number }>`SELECT latency_ms AS latency FROM kernel_events ORDER BY event_id`
      expect(rows.map((row) => row.latency)).toEqual(Array.from({ length: next }, (_, i) => i))
    }))
})
