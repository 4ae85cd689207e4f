import { afterAll, beforeAll } from "@effect/vitest"
import { Effect, Exit, type Redacted, Scope } from "effect"
import { startPglite } from "../support/pglite.js"
import { startPostgres } from "../support/postgres.js"
import { postgres, type RecallDatabase } from "./databases.js"

/** Starting a server: PGlite compiles its WebAssembly first (tens of seconds on a loaded machine). */
const startTimeout = 240_000

/**
 * The PostgreSQL databases of one test file, started once before its tests (a server per file) and stopped after
 * them: PGlite with pgvector (`pglite`) and the real server, which has no pgvector (`postgres`).
 */
export const postgresServers = (which: { readonly pglite: boolean; readonly postgres: boolean }) => {
  const urls: { pglite?: Redacted.Redacted; postgres?: Redacted.Redacted } = {}
  const scope = Effect.runSync(Scope.make())
  beforeAll(() =>
    Effect.runPromise(Effect.gen(function*() {
      if (which.pglite) urls.pglite = (yield* Scope.extend(startPglite, scope)).url
      if (which.postgres) urls.postgres = (yield* Scope.extend(startPostgres, scope)).url
    })), startTimeout)
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)), startTimeout)
  const urlOf = (name: "pglite" | "postgres") => () => {
    const url = urls[name]
    if (url === undefined) throw new Error(`the ${name} server did not start`)
    return url
  }
  return {
    pglite: postgres("PostgreSQL on PGlite with pgvector", true, urlOf("pglite")),
    postgres: postgres("PostgreSQL 15 without pgvector", false, urlOf("postgres"))
  } satisfies Record<string, RecallDatabase>
}
