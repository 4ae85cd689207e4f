import { Console, Effect, Layer, Option } from "effect"
import * as Layers from "../runtime/layers.js"
import { AgentConfig } from "../config/AgentConfig.js"
import type { ToolScope } from "../config/schema.js"
import { type MemoryReach, sharedDirName } from "../kernel/Audience.js"
import * as AgentDatabase from "../runtime/agentDatabase.js"
import { effectiveScope, type Pairing, PairingStore, userKey } from "../users/PairingStore.js"
import { syncUsersFile } from "../users/usersFile.js"
import { CommandFailed } from "./errors.js"
import { table } from "./table.js"

// These commands write kern.db while `kern run` may hold the folder: they do not take the agent lock. Each is one
// short SQLite write (WAL, with a busy timeout), and USERS.md is rewritten whole and atomically from kern.db, so a
// concurrent writer of USERS.md's generated section can only be overwritten by the same, newer content.

const usersLayer = (dir: string) => {
  const config = Layers.configLayer(dir, (line) => Console.error(`kern: ${line}`))
  const database = AgentDatabase.layerAsIs
  return PairingStore.Default.pipe(Layer.provideMerge(database), Layer.provideMerge(config))
}

const failed = (error: { readonly message: string }) => new CommandFailed({ message: error.message })

/** USERS.md follows kern.db; a failure there is reported, the change in kern.db stands. */
const mirror = syncUsersFile.pipe(
  Effect.catchAll((error) => Console.error(`kern: warning: USERS.md was not updated (${error.message}); the next change retries`))
)

const userJson = (pairing: Pairing, configScope: ToolScope) => ({
  id: userKey(pairing),
  interface: pairing.interface,
  userId: pairing.userId,
  chatId: pairing.chatId,
  name: pairing.displayName,
  status: pairing.status,
  role: pairing.role,
  toolScope: pairing.status === "approved" ? effectiveScope(pairing, configScope) : null,
  memory: pairing.memory,
  code: pairing.status === "pending" ? pairing.code : null,
  expiresAtMs: pairing.expiresAtMs,
  requestedAtMs: pairing.requestedAtMs,
  approvedAtMs: pairing.approvedAtMs,
  approvedBy: pairing.approvedBy
})

export interface UsersArgs {
  readonly dir: string
  readonly json: boolean
}

export const list = (args: UsersArgs) =>
  Effect.gen(function*() {
    const { config } = yield* AgentConfig
    const store = yield* PairingStore
    const users = (yield* store.list.pipe(Effect.mapError(failed))).map((p) => userJson(p, config.toolScope))
    if (args.json) return yield* Console.log(JSON.stringify(users))
    if (users.length === 0) return yield* Console.log("no channel users have paired or asked to pair")
    yield* Console.log(table(
      ["id", "name", "status", "role", "scope", "memory", "code"],
      users.map((u) => [u.id, u.name, u.status, u.role, u.toolScope ?? "", u.status === "approved" ? u.memory : "", u.code ?? ""])
    ))
  }).pipe(Effect.provide(usersLayer(args.dir)))

export interface PairArgs {
  readonly dir: string
  readonly code: string
}

export const pair = (args: PairArgs) =>
  Effect.gen(function*() {
    const store = yield* PairingStore
    const { changed, pairing } = yield* store.approve(args.code, "operator:cli").pipe(Effect.mapError(failed))
    yield* mirror
    yield* Console.log(changed ? `approved ${userKey(pairing)}` : `${userKey(pairing)} was already approved`)
  }).pipe(Effect.provide(usersLayer(args.dir)))

export interface UserIdArgs {
  readonly dir: string
  readonly id: string
}

export const promote = (args: UserIdArgs) =>
  Effect.gen(function*() {
    const store = yield* PairingStore
    const user = yield* store.promote(args.id).pipe(Effect.mapError(failed))
    yield* mirror
    yield* Console.log(`${userKey(user)} is now an operator`)
  }).pipe(Effect.provide(usersLayer(args.dir)))

/** What a user's memory reach means, for the line that confirms it. */
const reachText = (memory: MemoryReach) =>
  memory === "all" ? "the whole agent folder (never .kern/)" : `only the agent folder's ${sharedDirName}/`

export const scope = (args: UserIdArgs & { readonly scope: Option.Option<ToolScope>; readonly memory: Option.Option<MemoryReach> }) =>
  Effect.gen(function*() {
    const { config } = yield* AgentConfig
    const store = yield* PairingStore
    if (Option.isSome(args.scope)) {
      const user = yield* store.setScope(args.id, args.scope.value).pipe(Effect.mapError(failed))
      const effective = effectiveScope(user, config.toolScope)
      yield* Console.log(
        `${userKey(user)} has tool scope ${args.scope.value}` +
          (user.role === "operator"
            ? ` (as an operator they use the config's toolScope, ${config.toolScope})`
            : effective === args.scope.value
            ? ""
            : ` (limited to ${effective} by the config's toolScope)`)
      )
    }
    if (Option.isSome(args.memory)) {
      const user = yield* store.setMemory(args.id, args.memory.value).pipe(Effect.mapError(failed))
      yield* Console.log(
        `${userKey(user)}'s file tools reach ${reachText(args.memory.value)} in their own conversations` +
          (user.role === "operator" ? " (as an operator, their conversation is the operator's and reaches everything)" : "")
      )
    }
    yield* mirror
  }).pipe(Effect.provide(usersLayer(args.dir)))

export const revoke = (args: UserIdArgs) =>
  Effect.gen(function*() {
    const store = yield* PairingStore
    const user = yield* store.revoke(args.id).pipe(Effect.mapError(failed))
    yield* mirror
    yield* Console.log(`revoked ${userKey(user)}: their messages no longer reach the agent until they pair again`)
  }).pipe(Effect.provide(usersLayer(args.dir)))
