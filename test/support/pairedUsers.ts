import type { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import * as NodePath from "node:path"
import * as Database from "../../src/storage/Database.js"
import { PairingStore } from "../../src/users/PairingStore.js"

/**
 * Telegram users paired as the channel pairs them (a request from their DM, then the operator's approval), in the agent
 * folder's kern.db (or `database`: the agent's, wherever its config puts it), before anything else opens it.
 */
export const pairTelegramUsers = (
  dir: string,
  users: ReadonlyArray<{ readonly userId: string; readonly displayName: string }>,
  database: Layer.Layer<SqlClient.SqlClient, unknown> = Database.layer({ filename: NodePath.join(dir, ".kern/kern.db") })
) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const store = yield* PairingStore
      for (const user of users) {
        const pending = yield* store.request({ interface: "telegram", userId: user.userId, chatId: user.userId, displayName: user.displayName })
        yield* store.approve(pending.code, "operator")
      }
    }).pipe(Effect.provide(PairingStore.Default.pipe(Layer.provide(database))))
  )
