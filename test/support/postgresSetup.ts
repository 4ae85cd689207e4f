import type { TestProject } from "vitest/node"
import { Effect, Exit, Redacted, Scope } from "effect"
import { startPostgres } from "./postgres.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's throwaway PostgreSQL server (test/support/databases.ts gives each test a schema of its own on it). */
    postgresUrl: string
  }
}

/**
 * One PostgreSQL server for the whole run, started before any file and stopped after the last: the repository tests
 * run on it as on SQLite, each in a schema of its own. One server costs one initdb and start (about a second on a
 * quiet machine); a server per file would cost that for every file that uses it.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const scope = Effect.runSync(Scope.make())
  const pg = await Effect.runPromise(Scope.extend(startPostgres, scope))
  project.provide("postgresUrl", Redacted.value(pg.url))
  return () => Effect.runPromise(Scope.close(scope, Exit.void))
}
