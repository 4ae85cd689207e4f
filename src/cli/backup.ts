import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import { Console, Effect, Layer, Option } from "effect"
import { createBackup } from "../backup/createBackup.js"
import { restoreBackup } from "../backup/restoreBackup.js"
import { verifyBackup } from "../backup/verifyBackup.js"
import { counted } from "../config/counted.js"
import { Git } from "../memory/Git.js"
import { formatBytes } from "../tools/textFile.js"
import { UsageError } from "./errors.js"

const gitLayer = Git.Default.pipe(Layer.provide(NodeCommandExecutor.layer))

const stderr = (line: string) => Console.error(`kern: ${line}`)

export interface BackupArgs {
  readonly dir: string
  readonly output: Option.Option<string>
  readonly includeSecrets: boolean
  readonly force: boolean
  readonly json: boolean
}

/** `kern backup [dir] -o FILE`. */
export const backup = (args: BackupArgs) =>
  Effect.gen(function*() {
    if (Option.isNone(args.output)) {
      return yield* new UsageError({ message: "backup needs the archive to write: kern backup [dir] -o FILE" })
    }
    const summary = yield* createBackup({ ...args, output: args.output.value, report: stderr })
    if (args.json) return yield* Console.log(JSON.stringify(summary))
    yield* Console.log(
      `wrote ${summary.file} (${formatBytes(summary.bytes)}): agent ${summary.agent}; kern.db, the memory repository ` +
        `(${counted(summary.commits, "commit")}), ${counted(summary.sessions, "session")}, ` +
        `${counted(summary.artifacts, "artifact")}, config${summary.secrets ? ", .kern/.env" : ""}`
    )
    yield* Console.log(
      summary.secrets
        ? "it holds the agent's secrets (.kern/.env): written 0600, readable only by you; keep it as private as the key itself"
        : "written 0600 (it holds the conversations); secrets (.kern/.env) are not in it: add --include-secrets for them"
    )
  }).pipe(Effect.scoped, Effect.provide(gitLayer))

/** `kern backup verify FILE`. */
export const verify = (args: { readonly file: string; readonly json: boolean }) =>
  Effect.gen(function*() {
    const report = yield* verifyBackup(args.file)
    if (args.json) return yield* Console.log(JSON.stringify({ ok: true, ...report }))
    yield* Console.log(
      `ok: ${report.file}: agent ${report.agent}, made ${report.createdAt} by kern ${report.kernVersion}; ` +
        `${counted(report.entries, "entry", "entries")} (${formatBytes(report.bytes)}) match the manifest, the memory bundle ` +
        `verifies (${counted(report.refs, "ref")}), kern.db passes SQLite's integrity check` +
        (report.secrets ? "; it holds .kern/.env" : "")
    )
  }).pipe(Effect.provide(gitLayer))

/** `kern restore FILE --dir NEW`. */
export const restore = (args: {
  readonly file: string
  readonly dir: Option.Option<string>
  readonly dirFlag: Option.Option<string>
  readonly json: boolean
}) =>
  Effect.gen(function*() {
    const { dir, dirFlag } = args
    if (Option.isSome(dir) && Option.isSome(dirFlag) && dir.value !== dirFlag.value) {
      return yield* new UsageError({ message: `two folders given: "${dir.value}" and --dir "${dirFlag.value}"` })
    }
    const target = Option.orElse(dirFlag, () => dir)
    if (Option.isNone(target)) {
      return yield* new UsageError({ message: "restore needs a new folder to restore into: kern restore FILE --dir NEW" })
    }
    const report = yield* restoreBackup(args.file, target.value)
    if (args.json) return yield* Console.log(JSON.stringify(report))
    yield* Console.log(
      `restored agent ${report.agent} (backed up ${report.createdAt}) into ${report.dir}: the memory repository` +
        `${report.branch === undefined ? "" : ` (branch ${report.branch})`}, ` +
        `${report.database === undefined ? "kern.db" : `kern.db's rows (into ${report.database})`}, ${counted(report.sessions, "session")}, ` +
        `${counted(report.artifacts, "artifact")}, config${report.secrets ? ", .kern/.env" : ""}`
    )
    if (!report.secrets) {
      yield* Console.log(
        `the backup holds no secrets: put the provider key in ${report.dir}/.kern/.env (or the environment) before kern run`
      )
    }
  }).pipe(Effect.provide(gitLayer))
