import { FileSystem } from "@effect/platform"
import { Effect, Layer } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import * as Database from "../storage/Database.js"
import { type Pairing, PairingStore } from "../users/PairingStore.js"

const nobody: ReadonlyArray<Pairing> = []

/**
 * The paired users in kern.db, for naming the people of the sessions `kern sessions list` shows. Loaded only when a
 * session is not the operator's, so a listing of the operator's sessions alone opens no database. A kern.db that is
 * absent or empty holds nobody, and is neither created nor migrated for a listing.
 */
export const pairedUsers = Effect.gen(function*() {
  const { paths } = yield* AgentConfig
  const fs = yield* FileSystem.FileSystem
  const size = (yield* fs.exists(paths.dbFile)) ? Number((yield* fs.stat(paths.dbFile)).size) : 0
  if (size === 0) return nobody
  const store = PairingStore.Default.pipe(Layer.provide(Database.layer({ filename: paths.dbFile })))
  return yield* Effect.flatMap(PairingStore, (pairings) => pairings.list).pipe(Effect.provide(store))
}).pipe(Effect.withSpan("kern.cli.sessions.pairedUsers"))
