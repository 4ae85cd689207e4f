import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Console, Effect, Either, Layer, Option } from "effect"
import { counted } from "../config/counted.js"
import { agentPaths } from "../config/paths.js"
import { Git } from "../memory/Git.js"
import * as LockFile from "../storage/LockFile.js"
import { channelsCheck } from "./doctor/channels.js"
import { type CheckResult, guarded, resultOf, skipped } from "./doctor/Check.js"
import { configCheck } from "./doctor/configCheck.js"
import { databaseTarget } from "../config/database.js"
import { databaseCheck } from "./doctor/database.js"
import { postgresCheck } from "./doctor/postgres.js"
import { diskCheck } from "./doctor/disk.js"
import { gitCheck } from "./doctor/gitRepo.js"
import { lockCheck } from "./doctor/lock.js"
import { mcpCheck } from "./doctor/mcpServers.js"
import { permissionsCheck } from "./doctor/permissions.js"
import { recallCheck } from "./doctor/recallIndex.js"
import { summarizerCheck } from "./doctor/summarizer.js"
import { CommandFailed } from "./errors.js"

export interface DoctorArgs {
  readonly dir: string
  readonly json: boolean
}

const doctorLayer = Layer.mergeAll(Git.Default.pipe(Layer.provide(NodeCommandExecutor.layer)), NodeHttpClient.layer)

/**
 * Every check of the folder, the ones that ask the network or start processes concurrently. Nothing is changed: the
 * lock is read, never taken; kern.db is opened read-only; servers the doctor starts end with it.
 */
const allChecks = (dir: string) =>
  Effect.gen(function*() {
    const paths = agentPaths(dir)
    const config = yield* configCheck(dir)
    const loaded = config.loaded
    const running = Option.isSome(yield* LockFile.readHolder(paths.lockFile).pipe(Effect.orElseSucceed(() => Option.none())))
    // kern.db's tables where the config puts them: the SQLite file, or the agent's schema on PostgreSQL.
    const target = loaded === undefined ? undefined : Either.getOrUndefined(databaseTarget(loaded.config, loaded.env, paths.dbFile))
    const database = target?._tag === "postgres" ? yield* postgresCheck(target) : yield* databaseCheck(paths)
    const unread = database.result.level === "ok" ? "no kern.db yet: nothing stored" : "kern.db could not be read"
    const withConfig = <R>(name: string, check: (l: NonNullable<typeof loaded>) => Effect.Effect<CheckResult, { readonly message: string }, R>) =>
      loaded === undefined ? Effect.succeed(skipped(name, "the config does not load")) : guarded(name, check(loaded))
    const withDatabase = (name: string, check: (l: NonNullable<typeof loaded>) => Effect.Effect<CheckResult, { readonly message: string }, import("@effect/sql").SqlClient.SqlClient>) =>
      withConfig(name, (l) =>
        Option.match(database.reader, {
          onNone: () => Effect.succeed(database.result.level === "ok" ? resultOf(name, [], unread) : skipped(name, unread)),
          onSome: (reader) => Effect.provide(check(l), reader)
        }))
    const rest = yield* Effect.all([
      guarded("permissions", permissionsCheck(paths)),
      guarded("lock", lockCheck(paths)),
      withDatabase("recall", (l) => recallCheck(l, running)),
      withDatabase("summarizer", (l) => summarizerCheck(l, running)),
      withConfig("channels", channelsCheck),
      withConfig("mcp", mcpCheck),
      guarded("disk", diskCheck(paths.dir)),
      guarded("git", gitCheck(paths.dir, loaded))
    ], { concurrency: "unbounded" })
    const [permissions, lock, ...others] = rest
    return [config.result, permissions, lock, database.result, ...others]
  }).pipe(Effect.scoped, Effect.provide(doctorLayer))

const width = 12

/** A line per check, then what to do about what was found. */
export const report = (results: ReadonlyArray<CheckResult>): string => {
  const lines = results.map((result) => `${result.level.padEnd(8)} ${result.check.padEnd(width)} ${result.summary}`)
  const fixes = results.flatMap((result) => result.fixes.map((fix) => `  ${result.check}: ${fix}`))
  const problems = results.filter((result) => result.level === "problem").length
  const warnings = results.filter((result) => result.level === "warning").length
  const verdict = problems === 0 && warnings === 0
    ? `all is well: ${results.length} checks ok`
    : `${counted(problems, "problem")}, ${counted(warnings, "warning")}`
  return [...lines, ...(fixes.length === 0 ? [] : ["", "What to do:", ...fixes]), "", verdict].join("\n")
}

/** `kern doctor [dir]`: exit 1 when any check found a problem, 0 otherwise (warnings included). */
export const run = (args: DoctorArgs) =>
  Effect.gen(function*() {
    const results = yield* allChecks(args.dir)
    const problems = results.filter((result) => result.level === "problem").length
    yield* Console.log(
      args.json
        ? JSON.stringify({ dir: agentPaths(args.dir).dir, ok: problems === 0, checks: results })
        : report(results)
    )
    if (problems > 0) return yield* new CommandFailed({ message: `doctor found ${counted(problems, "problem")} (what to do is above)` })
  })
