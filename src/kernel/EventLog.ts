import { transaction } from "../storage/transaction.js"
import { SqlClient } from "@effect/sql"
import { Clock, Context, Effect, Layer, Queue, Ref, Schedule, Schema } from "effect"
import { isDatabaseBusy, isDiskFull } from "../storage/diskFull.js"
import type { DecisionKey } from "./namespaces.js"

/** One audited kernel decision (a tool call, a denial, a memory write, a run boundary). */
export class KernelEvent extends Schema.Class<KernelEvent>("KernelEvent")({
  eventId: Schema.optional(Schema.Number),
  tsMs: Schema.Number,
  decisionKey: Schema.String,
  runId: Schema.String,
  traceId: Schema.String,
  sessionId: Schema.optionalWith(Schema.String, { default: () => "" }),
  toolId: Schema.optional(Schema.NullOr(Schema.String)),
  argsDigest: Schema.optional(Schema.NullOr(Schema.String)),
  status: Schema.String,
  errorCode: Schema.optional(Schema.NullOr(Schema.String)),
  errorMessage: Schema.optional(Schema.NullOr(Schema.String)),
  latencyMs: Schema.optional(Schema.NullOr(Schema.Number)),
  retries: Schema.optional(Schema.NullOr(Schema.Number)),
  contractFingerprint: Schema.optional(Schema.NullOr(Schema.String)),
  registeredFingerprint: Schema.optional(Schema.NullOr(Schema.String)),
  contractStatus: Schema.optional(Schema.NullOr(Schema.String)),
  contractEnforcement: Schema.optional(Schema.NullOr(Schema.String)),
  contractMismatch: Schema.optional(Schema.NullOr(Schema.Boolean)),
  detail: Schema.optional(Schema.NullOr(Schema.String))
}) {}

/** What a caller records; the log stamps the time. */
export type EventInput = Omit<ConstructorParameters<typeof KernelEvent>[0], "tsMs" | "eventId" | "decisionKey"> & {
  readonly decisionKey: DecisionKey
}

export class EventLogError extends Schema.TaggedError<EventLogError>()("EventLogError", {
  message: Schema.String
}) {}

/** The kernel's structured audit log, queryable by run. */
export class EventLog extends Context.Tag("kern/kernel/EventLog")<EventLog, {
  readonly enabled: boolean
  readonly record: (event: EventInput) => Effect.Effect<void, EventLogError>
  readonly byRun: (runId: string) => Effect.Effect<ReadonlyArray<KernelEvent>, EventLogError>
  readonly recent: (limit: number) => Effect.Effect<ReadonlyArray<KernelEvent>, EventLogError>
  readonly count: Effect.Effect<number, EventLogError>
}>() {}

/**
 * Records an event; a log that cannot record is warned about and the audited work goes on (an audit failure must not
 * fail a tool call or a turn).
 */
export const recordOrWarn = (log: EventLog["Type"], event: EventInput): Effect.Effect<void> =>
  log.record(event).pipe(
    Effect.catchAll((error) => Effect.logWarning(`kern: could not record ${event.decisionKey}: ${error.message}`))
  )

/** A run's own event (started, finished, a plan, a budget stop) with its detail as JSON. */
export const recordRunEvent = (
  log: EventLog["Type"],
  run: { readonly runId: string; readonly traceId: string; readonly sessionId: string },
  decisionKey: DecisionKey,
  status: string,
  detail: unknown
): Effect.Effect<void> =>
  recordOrWarn(log, {
    decisionKey,
    runId: run.runId,
    traceId: run.traceId,
    sessionId: run.sessionId,
    status,
    detail: JSON.stringify(detail)
  })

// EventInput is the class's own constructor type and its fields have no refinements (test/session/unvalidatedRecords.test.ts
// holds that), so validating each recorded event again is work for nothing.
const stamp = (event: EventInput) =>
  Effect.map(Clock.currentTimeMillis, (tsMs) => new KernelEvent({ ...event, tsMs }, true))

const Row = Schema.Struct({
  ...KernelEvent.fields,
  contractMismatch: Schema.optional(Schema.NullOr(Schema.Number))
})
const decodeRows = Schema.decodeUnknown(Schema.Array(Row))
type SqlRows = Effect.Effect<ReadonlyArray<unknown>, { readonly message: string }>

/** Events kept while kern.db cannot take them; past this many the newest are dropped, and counted. */
const maxKept = 10_000

/** How often kept events are tried again while kern.db is busy. */
const retryEvery = Schedule.spaced("2 seconds")

/**
 * Events in kern.db's `kernel_events` table. While kern.db is busy (another process holds its write lock past the
 * busy timeout) or its disk is full, events are kept in memory, in order, and written once it takes them again: by a
 * background retry, before the next event, and at shutdown. An audit write never fails the work it audits.
 */
export const layerSql: Layer.Layer<EventLog, never, SqlClient.SqlClient> = Layer.scoped(
  EventLog,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const fail = (error: { readonly message: string }) => new EventLogError({ message: error.message })
    const read = (rows: SqlRows): Effect.Effect<ReadonlyArray<KernelEvent>, EventLogError> =>
      rows.pipe(
        Effect.flatMap(decodeRows),
        Effect.map((decoded) =>
          decoded.map(({ contractMismatch, ...row }) =>
            new KernelEvent({
              ...row,
              ...(contractMismatch === undefined || contractMismatch === null ? {} : { contractMismatch: contractMismatch === 1 })
            })
          )
        ),
        Effect.mapError(fail)
      )
    const insert = (event: KernelEvent) => {
      const { eventId: _, contractMismatch, ...row } = event
      return sql`INSERT INTO kernel_events ${
        sql.insert({
          ...row,
          contractMismatch: contractMismatch === undefined || contractMismatch === null ? null : contractMismatch ? 1 : 0
        })
      }`
    }
    const kept = yield* Ref.make<ReadonlyArray<KernelEvent>>([])
    const dropped = yield* Ref.make(0)
    const flushing = yield* Effect.makeSemaphore(1)
    const wake = yield* Queue.sliding<void>(1)
    const transient = (error: unknown) => isDatabaseBusy(error) || isDiskFull(error)

    /** Writes the kept events, oldest first, in one transaction; they stay kept if kern.db still refuses them. */
    const flush = flushing.withPermits(1)(Effect.gen(function*() {
      const pending = yield* Ref.get(kept)
      if (pending.length === 0) return
      yield* transaction(sql)(Effect.forEach(pending, insert, { discard: true }))
      yield* Ref.update(kept, (events) => events.slice(pending.length))
      const lost = yield* Ref.getAndSet(dropped, 0)
      yield* Effect.logWarning(
        `kern: kern.db takes audit events again: ${pending.length} kept event(s) written` +
          (lost === 0 ? "" : `, ${lost} dropped past the ${maxKept} kept`)
      )
    }))

    const keep = (event: KernelEvent) =>
      Effect.flatMap(Ref.get(kept), (events) =>
        events.length >= maxKept
          ? Ref.update(dropped, (n) => n + 1)
          : Effect.zipRight(
            Ref.set(kept, [...events, event]),
            events.length === 0
              ? Effect.zipRight(
                Effect.logWarning("kern: kern.db is busy or full: audit events are kept in memory and written once it is free"),
                Queue.offer(wake, undefined)
              )
              : Effect.void
          ))

    const record = (input: EventInput) =>
      Effect.flatMap(stamp(input), (event) =>
        Effect.gen(function*() {
          // Order is kept: while events wait, a new one waits behind them.
          if ((yield* Ref.get(kept)).length > 0) {
            yield* keep(event)
            return yield* flush.pipe(Effect.catchIf(transient, () => Effect.void))
          }
          yield* insert(event).pipe(Effect.catchIf(transient, () => keep(event)))
        })).pipe(Effect.asVoid, Effect.mapError(fail), Effect.withSpan("kern.eventlog.record"))

    // The retry sleeps only while events are kept: woken by the first one kept, it tries until they are written.
    const retry = Queue.take(wake).pipe(
      Effect.zipRight(flush.pipe(
        Effect.retry({ schedule: retryEvery, while: transient }),
        Effect.catchAll((error) => Effect.logWarning(`kern: could not write kept audit events: ${error.message}`))
      )),
      Effect.forever
    )
    yield* Effect.forkScoped(retry)
    yield* Effect.addFinalizer(() =>
      flush.pipe(
        Effect.catchAll((error) =>
          Effect.flatMap(Ref.get(kept), (events) =>
            Effect.logError(`kern: ${events.length} audit event(s) could not be written to kern.db before shutdown: ${error.message}`)
          )
        )
      )
    )

    return {
      enabled: true,
      record,
      byRun: (runId) => read(sql`SELECT * FROM kernel_events WHERE run_id = ${runId} ORDER BY event_id`),
      recent: (limit) => read(sql`SELECT * FROM kernel_events ORDER BY event_id DESC LIMIT ${limit}`),
      count: sql<{ n: number }>`SELECT count(*) AS n FROM kernel_events`.pipe(
        Effect.map((rows) => rows[0]?.n ?? 0),
        Effect.mapError(fail)
      )
    }
  })
)

/** Events kept in memory, for tests and for embedding without a database. */
export const layerMemory: Layer.Layer<EventLog> = Layer.effect(
  EventLog,
  Effect.map(Ref.make<ReadonlyArray<KernelEvent>>([]), (ref) => ({
    enabled: true,
    record: (input) =>
      Effect.flatMap(stamp(input), (event) =>
        Ref.update(ref, (events) => [...events, new KernelEvent({ ...event, eventId: events.length + 1 })])),
    byRun: (runId) => Effect.map(Ref.get(ref), (events) => events.filter((event) => event.runId === runId)),
    recent: (limit) => Effect.map(Ref.get(ref), (events) => events.slice(-limit).reverse()),
    count: Effect.map(Ref.get(ref), (events) => events.length)
  }))
)

/** No event log: nothing is recorded (the executor skips building events at all). */
export const layerOff: Layer.Layer<EventLog> = Layer.succeed(EventLog, {
  enabled: false,
  record: () => Effect.void,
  byRun: () => Effect.succeed([]),
  recent: () => Effect.succeed([]),
  count: Effect.succeed(0)
})
