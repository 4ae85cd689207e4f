import { SqlClient } from "@effect/sql"
import { Chunk, Clock, Context, Effect, Layer, Queue, Ref, Schedule, Schema } from "effect"
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
  /** Queues an event; it is in kern.db once a flush has run (see layerSql for when that is). */
  readonly record: (event: EventInput) => Effect.Effect<void, EventLogError>
  /** Returns once every event recorded before it is in kern.db. */
  readonly flush: Effect.Effect<void, EventLogError>
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

/**
 * Every event recorded so far in kern.db before the caller goes on (before a tool call's result is stored); a log
 * that cannot write them now keeps them, warns, and the work goes on.
 */
export const flushOrWarn = (log: EventLog["Type"]): Effect.Effect<void> =>
  log.flush.pipe(Effect.catchAll((error) => Effect.logWarning(`kern: audit events are not yet in kern.db: ${error.message}`)))

/** A run's own event (started, finished, a plan, a budget stop) with its detail as JSON, in kern.db when this returns. */
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
  }).pipe(Effect.zipRight(flushOrWarn(log)))

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

/** How many times the writer lets other fibers run before it writes what was queued meanwhile. */
const gatherYields = 7

/** kernel_events' columns in the order of `valuesOf`. */
const columns = [
  "ts_ms", "decision_key", "run_id", "trace_id", "session_id", "tool_id", "args_digest", "status", "error_code",
  "error_message", "latency_ms", "retries", "contract_fingerprint", "registered_fingerprint", "contract_status",
  "contract_enforcement", "contract_mismatch", "detail"
] as const

type Bound = string | number | null

const valuesOf = (event: KernelEvent): ReadonlyArray<Bound> => [
  event.tsMs,
  event.decisionKey,
  event.runId,
  event.traceId,
  event.sessionId,
  event.toolId ?? null,
  event.argsDigest ?? null,
  event.status,
  event.errorCode ?? null,
  event.errorMessage ?? null,
  event.latencyMs ?? null,
  event.retries ?? null,
  event.contractFingerprint ?? null,
  event.registeredFingerprint ?? null,
  event.contractStatus ?? null,
  event.contractEnforcement ?? null,
  event.contractMismatch === undefined || event.contractMismatch === null ? null : event.contractMismatch ? 1 : 0,
  event.detail ?? null
]

/**
 * One statement for a batch of any size: the rows travel as one JSON array of arrays (one bound parameter), so the
 * statement is prepared once and a batch is atomic without a transaction.
 */
const insertBatch = `INSERT INTO kernel_events (${columns.join(", ")}) SELECT ${
  columns.map((_, i) => `value ->> ${i}`).join(", ")
} FROM json_each(?) ORDER BY key`

/**
 * Events in kern.db's `kernel_events` table, written in batches: `record` queues an event (a tool call pays no
 * transaction), and the queue is written in one statement soon after, by a background fiber woken by the first queued
 * event once the recording fibers have yielded a few times, by `flush`, and at scope close. What is durable when:
 * - `flush` returns once every event recorded before it is committed to kern.db (WAL: it survives the process being
 *   killed); the turn runner flushes before it stores a tool call's result, so a result the model is shown, now or
 *   after a restart, was audited first;
 * - a run's own events (`recordRunEvent`: started, finished, budget stops) are flushed before it returns;
 * - reads (`byRun`, `recent`, `count`) flush first, so they see every event recorded before them.
 * While kern.db is busy (another process holds its write lock past the busy timeout) or its disk is full, events are
 * kept in memory, in order, and written once it takes them again: by a background retry, by the next flush, and at
 * shutdown. An audit write never fails the work it audits.
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
    /** The events, oldest first, in one statement. */
    const write = (events: ReadonlyArray<KernelEvent>) => Effect.asVoid(sql.unsafe(insertBatch, [JSON.stringify(events.map(valuesOf))]))
    // Queued: recorded and not yet taken by a flush. Kept: taken by a flush kern.db refused (older than the queued).
    const queued = yield* Queue.unbounded<KernelEvent>()
    const kept = yield* Ref.make<ReadonlyArray<KernelEvent>>([])
    const dropped = yield* Ref.make(0)
    const flushing = yield* Effect.makeSemaphore(1)
    const wake = yield* Queue.sliding<void>(1)
    const transient = (error: unknown) => isDatabaseBusy(error) || isDiskFull(error)

    /** Keeps a refused batch for the next try, the newest past `maxKept` dropped and counted. */
    const keep = (batch: ReadonlyArray<KernelEvent>, wasKept: number) =>
      Effect.gen(function*() {
        if (batch.length > maxKept) yield* Ref.update(dropped, (n) => n + batch.length - maxKept)
        yield* Ref.set(kept, batch.slice(0, maxKept))
        if (wasKept === 0) {
          yield* Effect.logWarning("kern: kern.db is busy or full: audit events are kept in memory and written once it is free")
        }
      })

    /** Writes the kept and queued events, oldest first, in one statement; they stay kept if kern.db refuses them. */
    const flushRaw = flushing.withPermits(1)(Effect.gen(function*() {
      const before = yield* Ref.get(kept)
      const fresh = yield* Queue.takeAll(queued)
      if (before.length === 0 && fresh.length === 0) return
      const batch = before.length === 0 ? Chunk.toReadonlyArray(fresh) : [...before, ...fresh]
      yield* write(batch).pipe(Effect.tapError((error) => transient(error) ? keep(batch, before.length) : Effect.void))
      if (before.length === 0) return
      yield* Ref.set(kept, [])
      const lost = yield* Ref.getAndSet(dropped, 0)
      yield* Effect.logWarning(
        `kern: kern.db takes audit events again: ${before.length} kept event(s) written` +
          (lost === 0 ? "" : `, ${lost} dropped past the ${maxKept} kept`)
      )
    })).pipe(Effect.withSpan("kern.eventlog.flush", { captureStackTrace: false }))
    const flush = Effect.mapError(flushRaw, fail)

    const record = (input: EventInput) =>
      Effect.clockWith((clock) =>
        Effect.sync(() => {
          queued.unsafeOffer(new KernelEvent({ ...input, tsMs: clock.unsafeCurrentTimeMillis() }, true))
          wake.unsafeOffer(undefined)
        })
      )

    // Woken by the first queued event, the writer flushes once the recording fiber yields; while kern.db refuses the
    // batch it tries again every `retryEvery` until it is written.
    const writer = Queue.take(wake).pipe(
      // A burst of calls gathers first: the recording fibers yield a few times (no timer), then one statement writes it.
      Effect.zipRight(Effect.repeatN(Effect.yieldNow(), gatherYields)),
      Effect.zipRight(flushRaw.pipe(
        Effect.retry({ schedule: retryEvery, while: transient }),
        Effect.catchAll((error) => Effect.logWarning(`kern: could not write kept audit events: ${error.message}`))
      )),
      Effect.forever
    )
    yield* Effect.forkScoped(writer)
    yield* Effect.addFinalizer(() =>
      flush.pipe(
        Effect.catchAll((error) =>
          Effect.flatMap(Effect.zip(Ref.get(kept), Queue.size(queued)), ([events, waiting]) =>
            Effect.logError(
              `kern: ${events.length + waiting} audit event(s) could not be written to kern.db before shutdown: ${error.message}`
            ))
        )
      )
    )
    // A read sees every event recorded before it; one kern.db refuses now is read once it is written.
    const fresh = <A>(query: Effect.Effect<A, EventLogError>) =>
      Effect.zipRight(
        Effect.catchAll(flush, (error) => Effect.logWarning(`kern: audit events not yet in kern.db are not read: ${error.message}`)),
        query
      )

    return {
      enabled: true,
      record,
      flush,
      byRun: (runId) => fresh(read(sql`SELECT * FROM kernel_events WHERE run_id = ${runId} ORDER BY event_id`)),
      recent: (limit) => fresh(read(sql`SELECT * FROM kernel_events ORDER BY event_id DESC LIMIT ${limit}`)),
      count: fresh(sql<{ n: number }>`SELECT count(*) AS n FROM kernel_events`.pipe(
        Effect.map((rows) => rows[0]?.n ?? 0),
        Effect.mapError(fail)
      ))
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
    flush: Effect.void,
    byRun: (runId) => Effect.map(Ref.get(ref), (events) => events.filter((event) => event.runId === runId)),
    recent: (limit) => Effect.map(Ref.get(ref), (events) => events.slice(-limit).reverse()),
    count: Effect.map(Ref.get(ref), (events) => events.length)
  }))
)

/** No event log: nothing is recorded (the executor skips building events at all). */
export const layerOff: Layer.Layer<EventLog> = Layer.succeed(EventLog, {
  enabled: false,
  record: () => Effect.void,
  flush: Effect.void,
  byRun: () => Effect.succeed([]),
  recent: () => Effect.succeed([]),
  count: Effect.succeed(0)
})
