import { SqlClient } from "@effect/sql"
import { Clock, Effect, Random, Schema } from "effect"

/** A channel user known to the agent: waiting for the operator's approval, or approved. */
export class Pairing extends Schema.Class<Pairing>("Pairing")({
  code: Schema.String,
  interface: Schema.String,
  userId: Schema.String,
  chatId: Schema.String,
  displayName: Schema.String,
  status: Schema.Literal("pending", "approved"),
  requestedAtMs: Schema.Number,
  approvedAtMs: Schema.NullOr(Schema.Number),
  approvedBy: Schema.NullOr(Schema.String)
}) {}

export class PairingError extends Schema.TaggedError<PairingError>()("PairingError", {
  reason: Schema.Literal("unknown_code", "invalid_code", "storage"),
  message: Schema.String
}) {}

/** `KERN-` and four letters or digits, without the ones people confuse (0/O, 1/I). */
export const codePattern = /^KERN-[A-HJ-NP-Z2-9]{4}$/
const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

const decodeRows = Schema.decodeUnknown(Schema.Array(Pairing))

/**
 * Pairing (kern.db `pairings`): a channel asks for a code when an unknown user writes; the operator approves the
 * code (`kern pair`, or the kern tool). One row per interface and user.
 */
export class PairingStore extends Effect.Service<PairingStore>()("kern/channels/PairingStore", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const storage = (error: { readonly message: string }) =>
      new PairingError({ reason: "storage", message: `the pairing table could not be read or written: ${error.message}` })

    const all = sql`SELECT * FROM pairings ORDER BY requested_at_ms, code`.pipe(
      Effect.flatMap(decodeRows),
      Effect.mapError(storage)
    )

    const byUser = (iface: string, userId: string) =>
      sql`SELECT * FROM pairings WHERE interface = ${iface} AND user_id = ${userId}`.pipe(
        Effect.flatMap(decodeRows),
        Effect.map((rows) => rows[0]),
        Effect.mapError(storage)
      )

    const newCode = Effect.map(
      Effect.all(Array.from({ length: 4 }, () => Random.nextIntBetween(0, alphabet.length))),
      (indexes) => `KERN-${indexes.map((i) => alphabet[i]).join("")}`
    )

    /** The pairing of a user who wrote in: their existing one, or a new pending code. */
    const request = (user: { readonly interface: string; readonly userId: string; readonly chatId: string; readonly displayName?: string }) =>
      Effect.gen(function*() {
        const existing = yield* byUser(user.interface, user.userId)
        if (existing !== undefined) return existing
        const requestedAtMs = yield* Clock.currentTimeMillis
        const code = yield* newCode
        const pairing = new Pairing({
          code,
          interface: user.interface,
          userId: user.userId,
          chatId: user.chatId,
          displayName: user.displayName ?? "",
          status: "pending",
          requestedAtMs,
          approvedAtMs: null,
          approvedBy: null
        })
        yield* sql`INSERT INTO pairings ${sql.insert({ ...pairing })}`.pipe(Effect.mapError(storage))
        return pairing
      }).pipe(Effect.withSpan("kern.pairing.request"))

    /** Approves a pending code; approving an approved one again is a no-op that says so. */
    const approve = (rawCode: string, approvedBy: string) =>
      Effect.gen(function*() {
        const code = rawCode.trim().toUpperCase()
        if (!codePattern.test(code)) {
          return yield* new PairingError({ reason: "invalid_code", message: `"${rawCode}" is not a pairing code (they look like KERN-7QX4)` })
        }
        const rows = yield* sql`SELECT * FROM pairings WHERE code = ${code}`.pipe(Effect.flatMap(decodeRows), Effect.mapError(storage))
        const found = rows[0]
        if (found === undefined) {
          return yield* new PairingError({ reason: "unknown_code", message: `no pairing is waiting for code ${code}` })
        }
        if (found.status === "approved") return { pairing: found, changed: false }
        const approvedAtMs = yield* Clock.currentTimeMillis
        yield* sql`UPDATE pairings SET status = 'approved', approved_at_ms = ${approvedAtMs}, approved_by = ${approvedBy}
          WHERE code = ${code}`.pipe(Effect.mapError(storage))
        return { pairing: new Pairing({ ...found, status: "approved", approvedAtMs, approvedBy }), changed: true }
      }).pipe(Effect.withSpan("kern.pairing.approve"))

    const isApproved = (iface: string, userId: string) =>
      Effect.map(byUser(iface, userId), (pairing) => pairing?.status === "approved")

    return { request, approve, list: all, isApproved } as const
  })
}) {}
