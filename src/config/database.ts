import { Either, Redacted, Schema } from "effect"
import { referencedNames, resolveReferences } from "./mcpServers.js"

const reference = /\$\{[A-Za-z_][A-Za-z0-9_]*\}/
const postgresScheme = /^postgres(ql)?:\/\//

/**
 * A PostgreSQL connection URL (`postgres://user:password@host:5432/db`), or one with `${NAME}` references to
 * variables of `.kern/.env` or the environment (`postgres://kern:${PGPASSWORD}@db/kern`, or `${DATABASE_URL}` whole).
 */
const PostgresUrl = Schema.NonEmptyTrimmedString.pipe(
  Schema.filter((text) => postgresScheme.test(text) || reference.test(text))
).annotations({ identifier: "a postgres:// URL" })

/** A PostgreSQL schema name kern creates and uses unquoted-safe: lowercase letters, digits and `_`, 63 at most. */
export const SchemaName = Schema.String.pipe(Schema.pattern(/^[a-z_][a-z0-9_]{0,62}$/)).annotations({
  identifier: "a schema name (lowercase letters, digits and _, up to 63, not starting with a digit)"
})

/**
 * `database`: where kern.db's tables live. Absent, they are in `.kern/kern.db` (SQLite); with `url`, in a schema of
 * their own (`schema`, by default derived from the agent's name) on that PostgreSQL server.
 */
export const DatabaseConfig = Schema.Struct({
  url: PostgresUrl,
  schema: Schema.optional(SchemaName)
})
export type DatabaseConfig = typeof DatabaseConfig.Type

export const databaseExpectation =
  "an object { url: \"postgres://user:password@host:5432/db\" (${NAME} references allowed), schema? } (kern.db's tables on PostgreSQL)"

/**
 * The schema an agent's tables take by default: `kern_` and its name in lowercase letters, digits and `_` (a hosted
 * agent's name is already `[a-z0-9-]`; `-` becomes `_`), cut to PostgreSQL's 63.
 */
export const schemaFor = (name: string): string => `kern_${name.toLowerCase().replace(/[^a-z0-9_]/g, "_")}`.slice(0, 63)

/** The variables the URL references: their values are secrets. */
export const databaseSecretNames = (config: DatabaseConfig | undefined): ReadonlyArray<string> =>
  config === undefined ? [] : referencedNames(config.url)

/** The URL as it may be shown: everything but the password (`postgres://kern@db:5432/kern`). */
export const shownUrl = (url: string): string => {
  if (!URL.canParse(url)) return "(an unparsable postgres URL)"
  const parsed = new URL(url)
  parsed.password = ""
  return parsed.toString()
}

/** Where kern.db's tables are: SQLite's file, or a PostgreSQL server's schema. */
export type DatabaseTarget =
  | { readonly _tag: "sqlite"; readonly file: string }
  | {
    readonly _tag: "postgres"
    readonly url: Redacted.Redacted
    /** The URL without its password, for status, doctor and errors. */
    readonly shown: string
    readonly schema: string
    /** The password, when the URL has one: a secret the redactor must know. */
    readonly password: string | undefined
  }

/** Whether two targets are the same tables: the same SQLite file, or the same server URL and schema. */
export const sameTarget = (a: DatabaseTarget, b: DatabaseTarget): boolean =>
  a._tag === "sqlite"
    ? b._tag === "sqlite" && a.file === b.file
    : b._tag === "postgres" && Redacted.value(a.url) === Redacted.value(b.url) && a.schema === b.schema

/** `database.url` cannot be used as it stands; the message never holds the password. */
export class DatabaseConfigError extends Schema.TaggedError<DatabaseConfigError>()("DatabaseConfigError", {
  detail: Schema.String
}) {
  override get message(): string {
    return `database.url: ${this.detail}`
  }
}

/** The target the config names, its `${NAME}` references resolved from `env`. */
export const databaseTarget = (
  config: { readonly name: string; readonly database?: DatabaseConfig | undefined },
  env: Readonly<Record<string, string>>,
  sqliteFile: string
): Either.Either<DatabaseTarget, DatabaseConfigError> => {
  const database = config.database
  if (database === undefined) return Either.right({ _tag: "sqlite", file: sqliteFile })
  const resolved = resolveReferences(database.url, env)
  if ("missing" in resolved) {
    return Either.left(new DatabaseConfigError({ detail: `it references \${${resolved.missing}}, which is not set (.kern/.env or the environment)` }))
  }
  const url = resolved.value
  if (!URL.canParse(url) || !postgresScheme.test(url)) {
    return Either.left(new DatabaseConfigError({ detail: "it is not a postgres:// URL (postgres://user:password@host:5432/database)" }))
  }
  const parsed = new URL(url)
  if (parsed.hostname === "") return Either.left(new DatabaseConfigError({ detail: `${shownUrl(url)} names no host` }))
  return Either.right({
    _tag: "postgres",
    url: Redacted.make(url),
    shown: shownUrl(url),
    schema: database.schema ?? schemaFor(config.name),
    password: parsed.password === "" ? undefined : decodeURIComponent(parsed.password)
  })
}
