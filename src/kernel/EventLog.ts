import { SqlClient } from "@effect/sql"
import { Chunk, Clock, Context, Duration, Effect, Layer, Option, Queue, Ref, Schedule, Schema } from "effect"
import { type KnownSecret, KnownSecrets } from "../config/KnownSecrets.js"
import { databaseFile } from "../storage/databaseFile.js"
import { isDatabaseBusy, isDiskFull } from "../storage/diskFull.js"
import { processStart } from "../storage/LockFile.js"
import { journalFolder, journalName, type JournalWriter, openJournal } from "./auditJournal.js"
import { insertRowsFor, lineAt } from "./eventRows.js"
import { forgetRetired, ingestJournal, ingestOthers, retireJournal } from "./journalIngest.js"
import type { DecisionKey } from "./namespaces.js"
import { makePendingRows } from "./pendingRows.js"
import { randomHex } from "./RunContext.js"
import { redactSecretsInJson, redactSecretsInText } from "./secretGuard.js"

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
  /**
   * Records an event: once this returns it survives the process being killed (layerSql: it is in the journal), and it
   * is in kern.db once a flush has run (see layerSql for when that is).
   */
  readonly record: (event: EventInput) => Effect.Effect<void, EventLogError>
  /**
   * `record` at a time the caller read from the fiber's Clock, done when it returns, with no Effect step: for the tool
   * executor, which has its call's Clock at hand and records every call. It never fails: an event no journal takes
   * waits in memory for kern.db, as with `record`.
   */
  readonly recordAt: (event: EventInput, tsMs: number) => void
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
 * Every event recorded so far in kern.db before the caller goes on (a run's own events, which other processes read:
 * `kern status`'s usage); a log that cannot write them now keeps them, warns, and the work goes on.
 */
export const flushOrWarn = (log: EventLog["Type"]): Effect.Effect<void> =>
  log.flush.pipe(Effect.catchAll((error) => Effect.logWarning(`kern: audit events are not yet in kern.db: ${error.message}`)))

type RunIds = { readonly runId: string; readonly traceId: string; readonly sessionId: string }

/**
 * A run's own event with its detail as JSON, recorded (in the journal: it survives a kill) and in kern.db with the
 * next batch or flush. For an event nothing reads from kern.db before the run's next flushed one: a turn's start,
 * which its end (`recordRunEvent`) brings into kern.db with it, one transaction a turn instead of two.
 */
export const journalRunEvent = (
  log: EventLog["Type"],
  run: RunIds,
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

/** A run's own event (finished, a plan, a budget stop) with its detail as JSON, in kern.db when this returns. */
export const recordRunEvent = (
  log: EventLog["Type"],
  run: RunIds,
  decisionKey: DecisionKey,
  status: string,
  detail: unknown
): Effect.Effect<void> => journalRunEvent(log, run, decisionKey, status, detail).pipe(Effect.zipRight(flushOrWarn(log)))

const Row = Schema.Struct({
  ...KernelEvent.fields,
  contractMismatch: Schema.optional(Schema.NullOr(Schema.Number))
})
const decodeRows = Schema.decodeUnknown(Schema.Array(Row))
type SqlRows = Effect.Effect<ReadonlyArray<unknown>, { readonly message: string }>

/** Events kept in memory while neither a journal nor kern.db takes them; past this many the newest are dropped, and counted. */
const maxKept = 10_000

/** How often a batch kern.db refused is tried again. */
const retryEvery = Schedule.spaced("2 seconds")

/** How long the first event of a batch waits for others before the batch goes to kern.db. */
const batchDelay = Duration.millis(500)

/** A batch this large goes at once. */
const maxBatch = 2_000

/**
 * At most this many of the journal's lines are held as values for the move (pendingRows.ts); past them, while kern.db
 * refuses batches, the move reads the journal back.
 */
const maxPending = 4 * maxBatch

/** A journal all in kern.db and at least this large is replaced by a new one, and deleted. */
const rotateBytes = 4 << 20

/**
 * Events in kern.db's `kernel_events` table, through a journal (auditJournal.ts). `record` appends the event's line to
 * this event log's journal, `.kern/audit/<pid>-…jsonl` beside kern.db (0600), in one write with no fsync: once it
 * returns, the event survives the process being killed (kill -9, a crash), with no transaction on the call's path.
 * A background fiber, woken by the first event and waiting `batchDelay` (or until `maxBatch` are waiting), moves the
 * journal into kern.db in one transaction (journalIngest.ts); `flush` does the same at once and returns when every event
 * recorded before it is in kern.db, and the scope's close flushes and deletes the journal. Reads (`byRun`, `recent`,
 * `count`) flush first, and take in the journals of other processes too, so they see every event recorded before them
 * here or elsewhere. Building the layer replays the journals of processes that are gone (their last line torn by the
 * kill is said and skipped); each event is written exactly once however often a journal is read.
 *
 * Every event's free texts (`errorMessage`, `detail`) have the known secrets redacted before they are written
 * anywhere: the journal is a file at rest like kern.db.
 *
 * An in-memory kern.db (`:memory:`, tests) has no journal: events wait in memory for the batch. So do events a journal
 * refuses (a full disk): a warning says so, and they are written with the next batch. While kern.db refuses a batch
 * (another process holds its write lock past the busy timeout, a full disk) the events stay where they are and the
 * batch is tried again every `retryEvery`. An audit write never fails the work it audits.
 */
export const layerSql: Layer.Layer<EventLog, never, SqlClient.SqlClient | KnownSecrets> = Layer.suspend(() => layerSqlAt(Option.none()))

/**
 * As `layerSql`, with the journals in `fallbackFolder` when kern.db is no file beside which they would live
 * (PostgreSQL: the agent's `.kern/audit`). Without one there, events wait in memory for kern.db, and a kill -9 loses
 * the batch.
 */
export const layerSqlAt = (fallbackFolder: Option.Option<string>): Layer.Layer<EventLog, never, SqlClient.SqlClient | KnownSecrets> => Layer.scoped(
  EventLog,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { secrets } = yield* KnownSecrets
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
    const transient = (error: unknown) => isDatabaseBusy(error) || isDiskFull(error)
    const folder = Option.orElse(Option.map(yield* databaseFile(sql), journalFolder), () => fallbackFolder)
    const known = yield* Ref.make<ReadonlyMap<string, number>>(new Map())

    // Journals of processes that are gone: into kern.db before this log records anything.
    if (Option.isSome(folder)) {
      yield* ingestOthers(sql, folder.value, undefined, known).pipe(
        Effect.zipRight(forgetRetired(sql, folder.value)),
        Effect.catchAll((error) =>
          Effect.logWarning(`kern: audit journals in ${folder.value} are not yet in kern.db (the next start tries again): ${error.message}`)
        )
      )
    }

    const start = Option.getOrUndefined(yield* processStart(process.pid))
    /** A new journal of this process's own in `at` (synchronous: nothing else runs between it and its caller's check). */
    const openNamed = (at: string, random: string): JournalWriter | { readonly error: unknown } => {
      try {
        return openJournal(at, journalName(process.pid, start, random))
      } catch (error) {
        return { error }
      }
    }
    const noJournal = (at: string, error: unknown) =>
      Effect.logWarning(`kern: no audit journal in ${at} (events wait in memory for kern.db): ${String(error)}`)
    const openOwn = (at: string) =>
      Effect.flatMap(randomHex(8), (random) => {
        const opened = openNamed(at, random)
        return "error" in opened ? Effect.as(noJournal(at, opened.error), undefined) : Effect.succeed(opened)
      })
    // The journal being appended to, and how much of it is in kern.db (this log alone writes it, and it moves it).
    let journal: JournalWriter | undefined = Option.isSome(folder) ? yield* openOwn(folder.value) : undefined
    let committed = 0
    // The journal's lines not yet in kern.db as their values, which the move binds (SQLite: the statements that take
    // them are its own; PostgreSQL reads the journal back).
    const newPending = () => sql.onDialectOrElse({ pg: () => undefined, orElse: () => makePendingRows(maxPending) })
    let pending = newPending()

    // Recorded and not in a journal (none, or it failed), and a batch of them kern.db refused (older than the queued):
    // each event as its journal line's JSON (eventRows.ts).
    const queued = yield* Queue.unbounded<string>()
    const kept = yield* Ref.make<ReadonlyArray<string>>([])
    const dropped = yield* Ref.make(0)
    const flushing = yield* Effect.makeSemaphore(1)
    const wake = yield* Queue.sliding<void>(1)
    const full = yield* Queue.sliding<void>(1)
    let waiting = 0

    /** Keeps a refused batch for the next try, the newest past `maxKept` dropped and counted. */
    const keep = (batch: ReadonlyArray<string>, wasKept: number) =>
      Effect.gen(function*() {
        if (batch.length > maxKept) yield* Ref.update(dropped, (n) => n + batch.length - maxKept)
        yield* Ref.set(kept, batch.slice(0, maxKept))
        if (wasKept === 0) {
          yield* Effect.logWarning("kern: kern.db is busy or full: audit events are kept in memory and written once it is free")
        }
      })

    /** The events no journal holds, oldest first, in one statement; they stay kept if kern.db refuses them. */
    const writeQueued = Effect.gen(function*() {
      const before = yield* Ref.get(kept)
      const fresh = yield* Queue.takeAll(queued)
      if (before.length === 0 && fresh.length === 0) return
      const batch = before.length === 0 ? Chunk.toReadonlyArray(fresh) : [...before, ...fresh]
      yield* sql.unsafe(insertRowsFor(sql), [`[${batch.join(",")}]`]).pipe(
        Effect.tapError((error) => transient(error) ? keep(batch, before.length) : Effect.void)
      )
      if (before.length === 0) return
      yield* Ref.set(kept, [])
      const lost = yield* Ref.getAndSet(dropped, 0)
      yield* Effect.logWarning(
        `kern: kern.db takes audit events again: ${before.length} kept event(s) written` +
          (lost === 0 ? "" : `, ${lost} dropped past the ${maxKept} kept`)
      )
    })

    /** The journal's lines past what is in kern.db; a large journal all in kern.db replaced by a new one and deleted. */
    const moveJournal = (at: string) =>
      Effect.gen(function*() {
        const own = journal
        if (own === undefined || own.size() === committed) return
        // A journal a failed write broke is read back: its torn end is said as before.
        const ingested = yield* ingestJournal(sql, at, own.name, true, own.broken() === undefined ? pending : undefined)
        committed = ingested.committed
        if (committed === own.size()) pending?.caughtUp(committed)
        if (own.broken() === undefined && (committed < rotateBytes || committed !== own.size())) return
        // Full, or broken by a failed write: the next event goes to a new journal, and this one, all moved, is deleted.
        const random = own.broken() === undefined ? yield* randomHex(8) : undefined
        // From this check to the switch nothing yields: an event recorded while the name was drawn went to this journal
        // and is not in kern.db yet, so it waits for the next move instead of being deleted with the file.
        if (own.broken() === undefined && committed !== own.size()) return
        const opened = random === undefined ? undefined : openNamed(at, random)
        journal = opened === undefined || "error" in opened ? undefined : opened
        committed = 0
        pending = newPending()
        own.close()
        if (opened !== undefined && "error" in opened) yield* noJournal(at, opened.error)
        yield* retireJournal(sql, at, own.name, ingested)
      })

    const flushRaw = flushing.withPermits(1)(Effect.gen(function*() {
      waiting = 0
      yield* writeQueued
      if (Option.isSome(folder)) yield* moveJournal(folder.value)
    })).pipe(Effect.withSpan("kern.eventlog.flush", { captureStackTrace: false }))
    const flush = Effect.mapError(flushRaw, fail)

    const recordAt = (input: EventInput, tsMs: number) => {
      const errorMessage = secrets.length === 0 ? input.errorMessage : redactText(input.errorMessage, secrets)
      const detail = secrets.length === 0 ? input.detail : redactDetail(input.detail, secrets)
      const line = lineAt(input, tsMs, errorMessage, detail)
      // A line no journal took waits in memory for kern.db, without its newline.
      if (journal === undefined || !journal.append(line)) queued.unsafeOffer(line.slice(0, -1))
      else pending?.add(input, tsMs, errorMessage, detail, journal.size())
      waiting += 1
      if (waiting === 1) wake.unsafeOffer(undefined)
      if (waiting === maxBatch) full.unsafeOffer(undefined)
    }
    const record = (input: EventInput) =>
      Effect.clockWith((clock) => Effect.sync(() => recordAt(input, clock.unsafeCurrentTimeMillis())))

    // Woken by the first event of a batch, the writer waits for more (or for a full batch), then moves them; while
    // kern.db refuses the batch it tries again every `retryEvery` until it is written.
    const writer = Queue.take(wake).pipe(
      Effect.zipRight(Effect.raceFirst(Effect.sleep(batchDelay), Queue.take(full))),
      Effect.zipRight(flushRaw.pipe(
        Effect.retry({ schedule: retryEvery, while: transient }),
        Effect.catchAll((error) => Effect.logWarning(`kern: could not write audit events to kern.db: ${error.message}`))
      )),
      Effect.forever
    )
    yield* Effect.forkScoped(writer)
    yield* Effect.addFinalizer(() =>
      flush.pipe(
        Effect.zipRight(Effect.suspend(() => {
          const own = journal
          if (own === undefined || Option.isNone(folder)) return Effect.void
          own.close()
          return retireJournal(sql, folder.value, own.name, { committed, size: own.size(), gone: false })
        })),
        Effect.catchAll((error) =>
          Effect.flatMap(Effect.zip(Ref.get(kept), Queue.size(queued)), ([events, inMemory]) =>
            Effect.logError(
              `kern: audit events could not be written to kern.db before shutdown (${error.message}): ` +
                (events.length + inMemory === 0
                  ? `they are in ${journal?.path ?? "the journal"}, which the next start writes there`
                  : `${events.length + inMemory} of them were only in memory and are lost`)
            ))
        )
      )
    )
    // A read sees every event recorded before it, here or in another process; one kern.db refuses now is read once it is written.
    const fresh = <A>(query: Effect.Effect<A, EventLogError>) =>
      Effect.zipRight(
        flush.pipe(
          Effect.zipRight(Option.isSome(folder) ? Effect.mapError(ingestOthers(sql, folder.value, journal?.name, known), fail) : Effect.void),
          Effect.catchAll((error) => Effect.logWarning(`kern: audit events not yet in kern.db are not read: ${error.message}`))
        ),
        query
      )

    return {
      enabled: true,
      record,
      recordAt,
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

/** An event's free texts with the known secrets redacted: the one redactor (secretGuard.ts), before anything is written. */
const redactText = (text: string | null | undefined, secrets: ReadonlyArray<KnownSecret>) =>
  typeof text === "string" ? redactSecretsInText(text, secrets) : text
const redactDetail = (detail: string | null | undefined, secrets: ReadonlyArray<KnownSecret>) =>
  typeof detail === "string" ? redactSecretsInJson(detail, secrets) : detail

/** Events kept in memory, for tests and for embedding without a database. */
export const layerMemory: Layer.Layer<EventLog> = Layer.sync(EventLog, () => {
  const events: Array<KernelEvent> = []
  // EventInput is the class's own constructor type and its fields have no refinements (test/session/unvalidatedRecords.test.ts
  // holds that), so validating each recorded event again is work for nothing.
  const recordAt = (input: EventInput, tsMs: number) => {
    events.push(new KernelEvent({ ...input, tsMs, eventId: events.length + 1 }, true))
  }
  return {
    enabled: true,
    record: (input) => Effect.map(Clock.currentTimeMillis, (tsMs) => recordAt(input, tsMs)),
    recordAt,
    flush: Effect.void,
    byRun: (runId) => Effect.sync(() => events.filter((event) => event.runId === runId)),
    recent: (limit) => Effect.sync(() => events.slice(-limit).reverse()),
    count: Effect.sync(() => events.length)
  }
})

/** No event log: nothing is recorded (the executor skips building events at all). */
export const layerOff: Layer.Layer<EventLog> = Layer.succeed(EventLog, {
  enabled: false,
  record: () => Effect.void,
  recordAt: () => {},
  flush: Effect.void,
  byRun: () => Effect.succeed([]),
  recent: () => Effect.succeed([]),
  count: Effect.succeed(0)
})
