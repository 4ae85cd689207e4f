import { SqlClient } from "@effect/sql"
import { Clock, Context, Effect, Layer, Ref, Schema } from "effect"
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

/** Events in kern.db's `kernel_events` table. */
export const layerSql: Layer.Layer<EventLog, never, SqlClient.SqlClient> = Layer.effect(
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
    return {
      enabled: true,
      record: (input) =>
        Effect.flatMap(stamp(input), (event) => {
          const { eventId: _, contractMismatch, ...row } = event
          return sql`INSERT INTO kernel_events ${
            sql.insert({
              ...row,
              contractMismatch: contractMismatch === undefined || contractMismatch === null ? null : contractMismatch ? 1 : 0
            })
          }`
        }).pipe(Effect.asVoid, Effect.mapError(fail), Effect.withSpan("kern.eventlog.record")),
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
