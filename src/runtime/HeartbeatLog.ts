import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { localIso } from "../session/envelope.js"

export const HeartbeatOutcome = Schema.Literal("ran", "skipped", "failed")
export type HeartbeatOutcome = typeof HeartbeatOutcome.Type

/** The heartbeat as `kern status` shows it: the last tick, its outcome and why, and the next one. */
export class HeartbeatState extends Schema.Class<HeartbeatState>("HeartbeatState")({
  lastAtMs: Schema.NullOr(Schema.Number),
  outcome: Schema.NullOr(HeartbeatOutcome),
  reason: Schema.String,
  nextAtMs: Schema.NullOr(Schema.Number)
}) {}

const decodeRows = Schema.decodeUnknown(Schema.Array(HeartbeatState))
const decodeDue = Schema.decodeUnknown(Schema.Array(Schema.Struct({ dueAtMs: Schema.NullOr(Schema.Number) })))
const decodePending = Schema.decodeUnknown(Schema.Array(Schema.Struct({ pendingActivity: Schema.Number })))

/** The heartbeat's record in kern.db (one row). A failure to write it is logged: the heartbeat goes on. */
export class HeartbeatLog extends Effect.Service<HeartbeatLog>()("kern/runtime/HeartbeatLog", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const logged = <A, E, R>(what: string) => (effect: Effect.Effect<A, E, R>) =>
      effect.pipe(
        Effect.asVoid,
        Effect.catchAll((error) => Effect.logWarning(`kern: could not record the heartbeat's ${what}`, error))
      )

    const ensureRow = sql`INSERT INTO heartbeat_state (id) VALUES (1) ON CONFLICT (id) DO NOTHING`

    /** What the last tick did. */
    const record = (atMs: number, outcome: HeartbeatOutcome, reason: string) =>
      Effect.zipRight(
        ensureRow,
        sql`UPDATE heartbeat_state SET last_at_ms = ${atMs}, outcome = ${outcome}, reason = ${reason} WHERE id = 1`
      ).pipe(logged("outcome"), Effect.withSpan("kern.heartbeat.record"))

    /**
     * When the next tick is due (NULL: no runtime is ticking). The due time itself stays when the runtime stops: the
     * next runtime keeps it (`due`).
     */
    const setNext = (nextAtMs: number | null) =>
      Effect.zipRight(
        ensureRow,
        nextAtMs === null
          ? sql`UPDATE heartbeat_state SET next_at_ms = NULL WHERE id = 1`
          : sql`UPDATE heartbeat_state SET next_at_ms = ${nextAtMs}, due_at_ms = ${nextAtMs} WHERE id = 1`
      ).pipe(logged("next time"), Effect.withSpan("kern.heartbeat.setNext"))

    /** When the next tick is due as the last runtime scheduled it; none before the first, or when it cannot be read. */
    const due = sql`SELECT due_at_ms FROM heartbeat_state WHERE id = 1`.pipe(
      Effect.flatMap(decodeDue),
      Effect.map((rows) => Option.fromNullable(rows[0]?.dueAtMs)),
      Effect.catchAll((error) =>
        Effect.as(Effect.logWarning("kern: could not read when the heartbeat is due; it is due an interval from now", error), Option.none())
      ),
      Effect.withSpan("kern.heartbeat.due")
    )

    /**
     * Whether something happened since the last heartbeat was sent, as the last runtime left it. Assumed so before the
     * first heartbeat, and when it cannot be read: a heartbeat too many costs a model call, one too few loses a note.
     */
    const pendingActivity = sql`SELECT pending_activity FROM heartbeat_state WHERE id = 1`.pipe(
      Effect.flatMap(decodePending),
      Effect.map((rows) => rows[0] === undefined || rows[0].pendingActivity !== 0),
      Effect.catchAll((error) =>
        Effect.as(Effect.logWarning("kern: could not read whether anything happened since the last heartbeat; assuming it did", error), true)
      ),
      Effect.withSpan("kern.heartbeat.pendingActivity")
    )

    /** Something happened since the last heartbeat was sent (true), or that heartbeat was just sent (false). */
    const setPendingActivity = (pending: boolean) =>
      Effect.zipRight(ensureRow, sql`UPDATE heartbeat_state SET pending_activity = ${pending ? 1 : 0} WHERE id = 1`).pipe(
        logged("activity"),
        Effect.withSpan("kern.heartbeat.setPendingActivity")
      )

    const state = sql`SELECT last_at_ms, outcome, reason, next_at_ms FROM heartbeat_state WHERE id = 1`.pipe(
      Effect.flatMap(decodeRows),
      Effect.map((rows) => rows[0] ?? new HeartbeatState({ lastAtMs: null, outcome: null, reason: "", nextAtMs: null }))
    )

    return { record, setNext, due, pendingActivity, setPendingActivity, state } as const
  })
}) {}

/** The heartbeat as recorded by the runtime: its last tick (what it did and why) and the next one. */
export const heartbeatStatus = (config: { readonly heartbeatInterval: number; readonly activeHours?: string | undefined; readonly timezone?: string | undefined }, state: HeartbeatState | undefined) => {
  const at = (ms: number | null) => ms === null ? null : localIso(ms, config.timezone)
  return {
    intervalMinutes: config.heartbeatInterval,
    activeHours: config.activeHours ?? null,
    last: state === undefined || state.lastAtMs === null || state.outcome === null
      ? null
      : { at: at(state.lastAtMs), atMs: state.lastAtMs, outcome: state.outcome, reason: state.reason },
    next: config.heartbeatInterval === 0 ? null : at(state?.nextAtMs ?? null),
    nextAtMs: config.heartbeatInterval === 0 ? null : state?.nextAtMs ?? null
  }
}
