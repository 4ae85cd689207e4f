import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Random, Schema } from "effect"
import { MemoryReach, ToolScope } from "../config/schema.js"
import { narrowerScope } from "../kernel/toolScope.js"
import { codeAlphabet, normalizeCode, pairingCodeProblem, splitUserId, userIdProblem } from "./userNames.js"

export const UserRole = Schema.Literal("operator", "user")
export type UserRole = typeof UserRole.Type

/** A channel user known to the agent: waiting for the operator's approval, or approved (a user). */
export class Pairing extends Schema.Class<Pairing>("Pairing")({
  code: Schema.String,
  interface: Schema.String,
  userId: Schema.String,
  chatId: Schema.String,
  displayName: Schema.String,
  status: Schema.Literal("pending", "approved"),
  requestedAtMs: Schema.Number,
  approvedAtMs: Schema.NullOr(Schema.Number),
  approvedBy: Schema.NullOr(Schema.String),
  role: UserRole,
  /** NULL: the role's default (an operator gets the config's toolScope, a user `read`). */
  toolScope: Schema.NullOr(ToolScope),
  /** When a pending code stops working; NULL for rows paired before codes expired. */
  expiresAtMs: Schema.NullOr(Schema.Number),
  /** How far the user's file tools reach in their conversations: shared/ only (the default) or the whole folder. */
  memory: MemoryReach
}) {}

export class PairingError extends Schema.TaggedError<PairingError>()("PairingError", {
  reason: Schema.Literal("unknown_code", "invalid_code", "expired_code", "unknown_user", "invalid_id", "not_approved", "storage"),
  message: Schema.String
}) {}

export { codeAlphabet, codePattern, userKey } from "./userNames.js"
/** A pending code works for a day; after that the user gets a new one when they write again. */
export const codeLifetimeMs = 24 * 60 * 60 * 1000

/** Whether a pairing's code still works at `nowMs` (rows paired before codes expired have none that ends). */
export const codeIsLive = (pairing: Pick<Pairing, "expiresAtMs">, nowMs: number): boolean =>
  pairing.expiresAtMs === null || pairing.expiresAtMs > nowMs


/**
 * The tools a user may have: an operator the config's `toolScope`, a user their own scope (`read` unless set),
 * never more than the config allows the agent at all.
 */
export const effectiveScope = (pairing: Pairing, configScope: ToolScope): ToolScope => {
  if (pairing.role === "operator") return configScope
  return narrowerScope(pairing.toolScope ?? "read", configScope)
}

const decodeRows = Schema.decodeUnknown(Schema.Array(Pairing))

/**
 * Users (kern.db `pairings`): a channel asks for a code when an unknown user writes; the operator approves the code
 * (`kern pair`, or the kern_pair tool), may promote the user to operator, set their tool scope, or revoke them.
 * One row per interface and user.
 */
export class PairingStore extends Effect.Service<PairingStore>()("kern/channels/PairingStore", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const storage = (error: { readonly message: string }) =>
      new PairingError({ reason: "storage", message: `the users table could not be read or written: ${error.message}` })
    const rows = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
      query.pipe(Effect.flatMap(decodeRows), Effect.mapError((error) => storage(error as { readonly message: string })))

    const all = rows(sql`SELECT * FROM pairings ORDER BY requested_at_ms, code`)

    const byUser = (iface: string, userId: string) =>
      Effect.map(rows(sql`SELECT * FROM pairings WHERE interface = ${iface} AND user_id = ${userId}`), (found) => found[0])

    const codeTaken = (code: string) =>
      Effect.map(rows(sql`SELECT * FROM pairings WHERE code = ${code}`), (found) => found.length > 0)

    const drawCode = Effect.map(
      Effect.all(Array.from({ length: 4 }, () => Random.nextIntBetween(0, codeAlphabet.length))),
      (indexes) => `KERN-${indexes.map((i) => codeAlphabet[i]).join("")}`
    )
    /** A code no row holds (the code is the table's key); a million codes make a second draw rare. */
    const newCode: Effect.Effect<string, PairingError> = Effect.flatMap(
      drawCode,
      (code) => Effect.flatMap(codeTaken(code), (taken) => taken ? newCode : Effect.succeed(code))
    )

    /**
     * The pairing of a user who wrote in: an approved one as it is, a pending one with its live code, or a new
     * code (replacing an expired one). A user never holds two live codes.
     */
    const request = (user: { readonly interface: string; readonly userId: string; readonly chatId: string; readonly displayName?: string }) =>
      Effect.gen(function*() {
        const existing = yield* byUser(user.interface, user.userId)
        const nowMs = yield* Clock.currentTimeMillis
        if (existing !== undefined && (existing.status === "approved" || codeIsLive(existing, nowMs))) return existing
        const code = yield* newCode
        const pairing = new Pairing({
          code,
          interface: user.interface,
          userId: user.userId,
          chatId: user.chatId,
          displayName: user.displayName ?? "",
          status: "pending",
          requestedAtMs: nowMs,
          approvedAtMs: null,
          approvedBy: null,
          role: "user",
          toolScope: null,
          expiresAtMs: nowMs + codeLifetimeMs,
          memory: "shared"
        })
        if (existing === undefined) {
          yield* sql`INSERT INTO pairings ${sql.insert({ ...pairing })}`.pipe(Effect.mapError(storage))
        } else {
          yield* sql`UPDATE pairings SET code = ${code}, chat_id = ${pairing.chatId}, display_name = ${pairing.displayName},
            requested_at_ms = ${nowMs}, expires_at_ms = ${pairing.expiresAtMs}
            WHERE interface = ${user.interface} AND user_id = ${user.userId}`.pipe(Effect.mapError(storage))
        }
        return pairing
      }).pipe(Effect.withSpan("kern.pairing.request"))

    /** Approves a pending, unexpired code; approving an approved one again is a no-op that says so. */
    const approve = (rawCode: string, approvedBy: string) =>
      Effect.gen(function*() {
        const code = normalizeCode(rawCode)
        const problem = pairingCodeProblem(rawCode)
        if (problem !== undefined) return yield* new PairingError({ reason: "invalid_code", message: problem })
        const found = (yield* rows(sql`SELECT * FROM pairings WHERE code = ${code}`))[0]
        if (found === undefined) {
          return yield* new PairingError({ reason: "unknown_code", message: `no pairing is waiting for code ${code}` })
        }
        if (found.status === "approved") return { pairing: found, changed: false }
        const approvedAtMs = yield* Clock.currentTimeMillis
        if (!codeIsLive(found, approvedAtMs)) {
          return yield* new PairingError({
            reason: "expired_code",
            message: `code ${code} expired (codes work for 24 hours); the user gets a new one when they write again`
          })
        }
        yield* sql`UPDATE pairings SET status = 'approved', approved_at_ms = ${approvedAtMs}, approved_by = ${approvedBy},
          expires_at_ms = NULL WHERE code = ${code}`.pipe(Effect.mapError(storage))
        return { pairing: new Pairing({ ...found, status: "approved", approvedAtMs, approvedBy, expiresAtMs: null }), changed: true }
      }).pipe(Effect.withSpan("kern.pairing.approve"))

    /** The user named `<interface>:<user id>`. */
    const find = (id: string) =>
      Effect.gen(function*() {
        const parts = splitUserId(id)
        if (parts === undefined) return yield* new PairingError({ reason: "invalid_id", message: userIdProblem(id) ?? id })
        const found = yield* byUser(parts.channel, parts.userId)
        if (found === undefined) {
          return yield* new PairingError({ reason: "unknown_user", message: `no user ${id} (kern users lists them)` })
        }
        return found
      })

    const approved = (id: string) =>
      Effect.filterOrFail(
        find(id),
        (found) => found.status === "approved",
        () => new PairingError({ reason: "not_approved", message: `${id} has not been approved yet: approve their code first (kern pair <code>)` })
      )

    const update = (
      found: Pairing,
      changes: { readonly role?: UserRole; readonly toolScope?: ToolScope; readonly memory?: MemoryReach }
    ) =>
      Effect.as(
        sql`UPDATE pairings SET ${sql.update(changes)} WHERE interface = ${found.interface} AND user_id = ${found.userId}`
          .pipe(Effect.mapError(storage)),
        new Pairing({ ...found, ...changes })
      )

    /** Makes an approved user an operator (the config's toolScope is then theirs). */
    const promote = (id: string) =>
      Effect.flatMap(approved(id), (found) => update(found, { role: "operator" })).pipe(Effect.withSpan("kern.pairing.promote"))

    /** Sets an approved user's own tool scope. */
    const setScope = (id: string, scope: ToolScope) =>
      Effect.flatMap(approved(id), (found) => update(found, { toolScope: scope })).pipe(Effect.withSpan("kern.pairing.scope"))

    /** Sets how far an approved user's file tools reach in their conversations. */
    const setMemory = (id: string, memory: MemoryReach) =>
      Effect.flatMap(approved(id), (found) => update(found, { memory })).pipe(Effect.withSpan("kern.pairing.memory"))

    /** Forgets a user (approved or pending): nothing they send reaches the model until they pair again. */
    const revoke = (id: string) =>
      Effect.flatMap(find(id), (found) =>
        Effect.as(
          sql`DELETE FROM pairings WHERE interface = ${found.interface} AND user_id = ${found.userId}`.pipe(Effect.mapError(storage)),
          found
        )).pipe(Effect.withSpan("kern.pairing.revoke"))

    const isApproved = (iface: string, userId: string) =>
      Effect.map(byUser(iface, userId), (pairing) => pairing?.status === "approved")

    /** The approved pairing of a channel user, if any: whose scope, name and memory reach a turn of theirs carries. */
    const approvedUser = (iface: string, userId: string) =>
      Effect.map(byUser(iface, userId), (pairing) => Option.fromNullable(pairing?.status === "approved" ? pairing : undefined))

    /** The tool scope a channel user's turn runs under; none for a stranger (nothing of theirs reaches the model). */
    const scopeFor = (iface: string, userId: string, configScope: ToolScope) =>
      Effect.map(approvedUser(iface, userId), Option.map((pairing) => effectiveScope(pairing, configScope)))

    return { request, approve, list: all, find, promote, setScope, setMemory, revoke, isApproved, scopeFor, approvedUser } as const
  })
}) {}
