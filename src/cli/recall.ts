import type { FileSystem } from "@effect/platform"
import * as NodePath from "node:path"
import { Console, Duration, Effect, Layer, Option, Schema } from "effect"
import * as AgentLock from "../runtime/AgentLock.js"
import * as AgentConfig from "../config/AgentConfig.js"
import { NotAnAgentFolder } from "../config/errors.js"
import { embeddingLine, indexLine, loadText, searchText, type WholeHit } from "../recall/format.js"
import * as KnownSecrets from "../config/KnownSecrets.js"
import * as RecallLayers from "../recall/layers.js"
import { Recall } from "../recall/Recall.js"
import { LoadResult, RecallStats, SearchResult } from "../recall/schema.js"
import * as AgentDatabase from "../runtime/agentDatabase.js"
import * as LockFile from "../storage/LockFile.js"
import { counted } from "../config/counted.js"
import { CommandFailed, UsageError } from "./errors.js"

export interface RecallSearchArgs {
  readonly dir: string
  readonly query: string
  readonly limit: Option.Option<number>
  readonly after: Option.Option<string>
  readonly before: Option.Option<string>
  readonly json: boolean
}

export interface RecallShowArgs {
  readonly dir: string
  readonly session: string
  readonly messages: { readonly start: number; readonly end: number }
  readonly json: boolean
}

export interface RecallDirArgs {
  readonly dir: string
  readonly json: boolean
}

export interface RecallReindexArgs {
  readonly dir: string
  readonly wait: number
}

/** kern.db and recall once the folder is known to be an agent's (a mistyped path creates nothing). */
export const recallLayer = Layer.unwrapEffect(Effect.gen(function*() {
  const { fileExists, paths } = yield* AgentConfig.AgentConfig
  if (!fileExists) return yield* new NotAnAgentFolder({ dir: paths.dir })
  return RecallLayers.layer.pipe(Layer.provideMerge(Layer.merge(AgentDatabase.layerAsIs, KnownSecrets.layer)))
}))

/** Read-only: no folder lock, so it works while the agent runs. */
const readOnly = <A, E>(dir: string, body: Effect.Effect<A, E, Recall | AgentConfig.AgentConfig | FileSystem.FileSystem>) =>
  body.pipe(Effect.provide(recallLayer), Effect.provide(AgentConfig.layer(dir)))

const dateProblem = (flag: string, value: Option.Option<string>) =>
  Option.isSome(value) && Number.isNaN(Date.parse(value.value))
    ? Option.some(new UsageError({ message: `--${flag} must be a date such as 2026-03-01, not "${value.value}"` }))
    : Option.none()

const encodeSearch = Schema.encodeSync(SearchResult)
const encodeStats = Schema.encodeSync(RecallStats)

const off = (dir: string) => new CommandFailed({ message: `recall is off for the agent in ${dir} ("recall": false in .kern/config.json)` })

const failed = (error: { readonly message: string }) => new CommandFailed({ message: error.message })

/** `kern recall search <query>`: hybrid search over the index as it is (the running agent keeps it current). */
export const search = (args: RecallSearchArgs) =>
  Effect.gen(function*() {
    for (const problem of [dateProblem("after", args.after), dateProblem("before", args.before)]) {
      if (Option.isSome(problem)) return yield* problem.value
    }
    if (Option.isSome(args.limit) && (args.limit.value < 1 || args.limit.value > 50)) {
      return yield* new UsageError({ message: `--limit must be from 1 to 50, not ${args.limit.value}` })
    }
    yield* readOnly(args.dir, Effect.gen(function*() {
      const recall = yield* Recall
      if (!recall.enabled) return yield* off(args.dir)
      const result = yield* recall.search({
        query: args.query,
        ...Option.match(args.limit, { onNone: () => ({}), onSome: (limit) => ({ limit }) }),
        ...Option.match(args.after, { onNone: () => ({}), onSome: (after) => ({ after }) }),
        ...Option.match(args.before, { onNone: () => ({}), onSome: (before) => ({ before }) })
      }).pipe(Effect.mapError(failed))
      yield* Console.log(args.json ? JSON.stringify(encodeSearch(result)) : searchText(result, commandWholeHit(args.dir)))
    }))
  })

/** A word as a shell takes it: as is when it is plain, else in single quotes. */
const shellWord = (word: string) => (/^[\w./:@%+=-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`)

/** For a terminal: the command that prints a cut hit whole (the folder named as the search named it). */
const commandWholeHit = (dir: string): WholeHit => (hit) =>
  hit.source === "session"
    ? `kern recall show ${shellWord(hit.sessionId ?? "")} ${hit.messageStart}-${hit.messageEnd}${dir === "." ? "" : ` ${shellWord(dir)}`} prints them whole`
    : `the whole file is ${NodePath.join(dir, hit.path ?? "")}`

const encodeLoad = Schema.encodeSync(LoadResult)

/** `kern recall show <session> <start>-<end>`: the messages a hit names, whole, from the index (read-only). */
export const show = (args: RecallShowArgs) =>
  readOnly(args.dir, Effect.gen(function*() {
    const recall = yield* Recall
    if (!recall.enabled) return yield* off(args.dir)
    const result = yield* recall.load({
      sessionId: args.session,
      messageStart: args.messages.start,
      messageEnd: args.messages.end,
      maxChars: Number.MAX_SAFE_INTEGER
    }).pipe(Effect.mapError(failed))
    yield* Console.log(args.json ? JSON.stringify(encodeLoad(result)) : loadText(result, args.messages.end))
  }))

/** Whether a live process holds the folder (its backfill, if noted, is then real). */
const holderAlive = Effect.flatMap(AgentConfig.AgentConfig, ({ paths }) =>
  LockFile.readHolder(paths.lockFile).pipe(Effect.map(Option.isSome), Effect.orElseSucceed(() => false)))

/** `kern recall stats`: what is indexed, the embedding model, whether a backfill runs. */
export const stats = (args: RecallDirArgs) =>
  readOnly(args.dir, Effect.gen(function*() {
    const recall = yield* Recall
    const figures = yield* recall.statsWith(yield* holderAlive).pipe(Effect.mapError(failed))
    if (args.json) return yield* Console.log(JSON.stringify({ enabled: recall.enabled, ...encodeStats(figures) }))
    yield* Console.log([
      `recall:     ${recall.enabled ? "on" : "off (\"recall\": false)"}`,
      `index:      ${indexLine(figures)}`,
      `embeddings: ${embeddingLine(figures)}`
    ].join("\n"))
  }))

/** `kern recall reindex`: the index built again from the session files, progress on stderr; holds the folder. */
export const reindex = (args: RecallReindexArgs) =>
  Effect.gen(function*() {
    const recall = yield* Recall
    if (!recall.enabled) return yield* off(args.dir)
    const messages = yield* recall.reindex((p) =>
      Console.error(
        p.chunking === undefined
          ? `kern: recall: ${p.sessionsDone}/${p.sessions} sessions, ${counted(p.messages, "message")}`
          : `kern: recall: session ${p.sessionsDone + 1}/${p.sessions}: ${p.chunking.chunked}/${p.chunking.of} messages chunked`
      )
    ).pipe(Effect.mapError(failed))
    const figures = yield* recall.stats.pipe(Effect.mapError(failed))
    yield* Console.error(`kern: recall: indexed ${counted(messages, "message")}`)
    yield* Console.log(`index:      ${indexLine(figures)}\nembeddings: ${embeddingLine(figures)}`)
  }).pipe(
    Effect.provide(recallLayer),
    Effect.provide(AgentLock.layerHeld({
      command: "kern recall reindex",
      whileAgentRuns: "it keeps the index current itself as messages come in; for a full rebuild, stop it (kern stop, " +
        "or Ctrl-C where it runs), run kern recall reindex, then start it again",
      wait: Duration.seconds(args.wait),
      report: (line) => Console.error(`kern: ${line}`)
    })),
    Effect.provide(AgentConfig.layer(args.dir))
  )
