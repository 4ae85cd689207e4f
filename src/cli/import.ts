import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import { Console, Duration, Effect, Layer } from "effect"
import * as AgentConfig from "../config/AgentConfig.js"
import { counted } from "../config/counted.js"
import { NotAnAgentFolder } from "../config/errors.js"
import * as KnownSecrets from "../config/KnownSecrets.js"
import { type ImportKind, importKinds } from "../importers/ImportPlan.js"
import { type ImportSummary, runImport } from "../importers/runImport.js"
import { Git } from "../memory/Git.js"
import { Tokenizer } from "../model/tokenizer.js"
import * as RecallStoreSqlite from "../recall/RecallStoreSqlite.js"
import * as AgentLock from "../runtime/AgentLock.js"
import * as SessionIndex from "../session/SessionIndex.js"
import { SessionStore } from "../session/SessionStore.js"
import * as Database from "../storage/Database.js"
import { UsageError } from "./errors.js"

export interface ImportArgs {
  readonly dir: string
  /** `[KIND] SOURCE`: one or two words. */
  readonly words: ReadonlyArray<string>
  readonly dryRun: boolean
  readonly wait: number
  readonly json: boolean
}

const stderr = (line: string) => Console.error(`kern: ${line}`)

const isKind = (word: string): word is ImportKind => (importKinds as ReadonlyArray<string>).includes(word)

/** The kind (if named) and the source, from `[KIND] SOURCE`. */
const parseWords = (words: ReadonlyArray<string>): Effect.Effect<{ readonly kind: ImportKind | undefined; readonly source: string }, UsageError> =>
  Effect.suspend((): Effect.Effect<{ readonly kind: ImportKind | undefined; readonly source: string }, UsageError> => {
    if (words.length === 1) return Effect.succeed({ kind: undefined, source: words[0]! })
    const [kind, source] = words
    if (words.length === 2 && kind !== undefined && source !== undefined && isKind(kind)) return Effect.succeed({ kind, source })
    return Effect.fail(new UsageError({
      message: words.length === 2
        ? `"${kind}" is not a kind kern imports (${importKinds.join(", ")}): kern import [${importKinds.join("|")}] SOURCE`
        : `kern import takes a source, with its kind before it if you name it: kern import [${importKinds.join("|")}] SOURCE`
    }))
  })

/** The agent's sessions, kern.db's recall index and git, once the folder is known to be an agent's. */
const agentLayer = Layer.unwrapEffect(Effect.gen(function*() {
  const { fileExists, paths } = yield* AgentConfig.AgentConfig
  if (!fileExists) return yield* new NotAnAgentFolder({ dir: paths.dir })
  const secrets = KnownSecrets.layer
  return Layer.mergeAll(
    SessionStore.Default.pipe(Layer.provide(Layer.merge(SessionIndex.layer, secrets))),
    RecallStoreSqlite.layer.pipe(Layer.provide(Database.layer({ filename: paths.dbFile }))),
    Tokenizer.Default,
    Git.Default.pipe(Layer.provide(NodeCommandExecutor.layer)),
    secrets
  )
}))

const lines = (summary: ImportSummary): Array<string> => {
  const out: Array<string> = []
  const verb = summary.dryRun ? "would import" : "imported"
  out.push(
    `${summary.dryRun ? "dry run: " : ""}${summary.kind} ${summary.source}: ${verb} ${counted(summary.sessions.length, "conversation")} ` +
      `(${counted(summary.messages, "message")})` +
      (summary.alreadyImported.length > 0 ? `; ${counted(summary.alreadyImported.length, "conversation")} imported before, left as they are` : "")
  )
  for (const session of summary.sessions) {
    out.push(`  ${session.from} → ${session.session ?? "a new session"} (${counted(session.messages, "message")})`)
    for (const note of session.notes) out.push(`    ${note}`)
  }
  const written = summary.memory.filter((m) => m.outcome === "written")
  const renamed = summary.memory.filter((m) => m.outcome === "renamed")
  const same = summary.memory.filter((m) => m.outcome === "same")
  out.push(
    `memory: ${summary.dryRun ? "would write" : "wrote"} ${counted(written.length + renamed.length, "file")}` +
      (renamed.length > 0 ? ` (${renamed.length} beside a different file of the same name)` : "") +
      (same.length > 0 ? `; ${counted(same.length, "file")} already there` : "") +
      (written.length + renamed.length > 0 ? `; ${summary.commit}` : "")
  )
  for (const m of [...written, ...renamed]) out.push(`  ${m.from} → ${m.to}${m.outcome === "renamed" ? " (renamed: a different file has its name)" : ""}`)
  if (!summary.dryRun) out.push(`recall: indexed ${counted(summary.indexed, "message")}`)
  if (summary.skipped.length > 0) {
    out.push(`skipped ${summary.skipped.length}:`)
    for (const s of summary.skipped) out.push(`  ${s.what}: ${s.why}`)
  }
  return out
}

/** `kern import [KIND] SOURCE [--dir AGENT] [--dry-run]`. */
export const run = (args: ImportArgs) =>
  Effect.gen(function*() {
    const { kind, source } = yield* parseWords(args.words)
    const summary = yield* runImport({ source, kind, dryRun: args.dryRun, report: stderr })
    if (args.json) return yield* Console.log(JSON.stringify(summary))
    yield* Console.log(lines(summary).join("\n"))
  }).pipe(
    Effect.scoped,
    Effect.provide(agentLayer),
    // A dry run writes nothing: it runs beside the agent. An import writes the agent's sessions, memory and index: it
    // holds the folder, and a running agent is asked to stop first rather than waited for.
    Effect.provide(
      args.dryRun ? AgentLock.layer : AgentLock.layerHeld({
        command: "kern import",
        whileAgentRuns: "stop it (kern stop, or Ctrl-C where it runs), run kern import, then start it again",
        wait: Duration.seconds(args.wait),
        report: stderr
      })
    ),
    Effect.provide(AgentConfig.layer(args.dir))
  )

