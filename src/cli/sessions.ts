import { FileSystem } from "@effect/platform"
import { Console, Effect, Layer, Option } from "effect"
import { neutralizeControls } from "../channels/terminalSafe.js"
import * as AgentConfig from "../config/AgentConfig.js"
import * as KnownSecrets from "../config/KnownSecrets.js"
import { mainConversation } from "../kernel/Audience.js"
import * as SessionIndex from "../session/SessionIndex.js"
import { SessionStore, type SessionSummary } from "../session/SessionStore.js"
import { NotAnAgentFolder } from "../config/errors.js"
import { type ConversationLabel, labelConversation, type PairedUser, personText } from "../users/conversationLabels.js"
import { table } from "./table.js"

export interface SessionsArgs {
  readonly dir: string
  readonly json: boolean
  /** Only the sessions of this conversation (`main`, `telegram-555`, …). */
  readonly conversation?: Option.Option<string> | undefined
}

/**
 * Sessions with their counts from their records (.kern/session-counts/): listing never reads a whole session unless
 * it changed behind kern, and opens neither kern.db nor SQLite while every session is the operator's.
 */
const storeLayer = SessionStore.Default.pipe(Layer.provide(Layer.merge(SessionIndex.layer, KnownSecrets.layer)))

/**
 * Where a listing gets the paired users' names (kern.db): the full command line's chunk, or the quick bundle's own
 * module (src/quick.ts), so that the database code stays out of the bundle every listing loads.
 */
export type NamesLoader = Effect.Effect<
  ReadonlyArray<PairedUser>,
  { readonly message: string },
  AgentConfig.AgentConfig | FileSystem.FileSystem
>

const nobody: ReadonlyArray<PairedUser> = []

/** Whether kern.db holds anything: absent or empty (as a folder brought in before any kern.db), it names nobody. */
const databaseHoldsData = Effect.gen(function*() {
  const { paths } = yield* AgentConfig.AgentConfig
  const fs = yield* FileSystem.FileSystem
  return (yield* fs.exists(paths.dbFile)) && (yield* fs.stat(paths.dbFile)).size > 0
})

/**
 * The paired users, loaded only when a session is somebody else's and kern.db holds data: the operator's sessions
 * alone open no database, and kern.db is never created for a listing. A kern.db kern cannot read costs the names,
 * not the listing: the sessions are still listed, and stderr says why the names are missing.
 */
const namesFor = (sessions: ReadonlyArray<SessionSummary>, load: NamesLoader) =>
  Effect.gen(function*() {
    if (sessions.every((s) => s.conversation === mainConversation)) return nobody
    if (!(yield* databaseHoldsData)) return nobody
    return yield* load
  }).pipe(
    Effect.catchAll((error) =>
      Effect.as(
        Console.error(`kern: warning: the paired users' names could not be read (${error.message}); sessions are listed without them`),
        nobody
      )
    )
  )

/** One cell of text from the users' own words: no terminal control, no line break. */
const cell = (text: string) => neutralizeControls(text).replace(/[\r\n]+/g, " ")

/** The listing as it is printed (without its last line break). */
const render = (json: boolean, only: Option.Option<string>, load: NamesLoader) =>
  Effect.gen(function*() {
    const all = yield* (yield* SessionStore).list
    const sessions = Option.isSome(only) ? all.filter((s) => s.conversation === only.value) : all
    const users = yield* namesFor(sessions, load)
    const labelled: ReadonlyArray<SessionSummary & ConversationLabel> = sessions.map((s) => ({
      ...s,
      ...labelConversation(s.conversation, users)
    }))
    if (json) return JSON.stringify(labelled)
    if (labelled.length === 0) {
      return Option.isSome(only) ? `no sessions in conversation ${cell(only.value)} (kern sessions list shows them all)` : "no sessions yet"
    }
    return table(
      ["session", "person", "channel", "messages", "size", "updated", "state"],
      labelled.map((s) => [
        s.id,
        cell(personText(s.person)),
        cell(s.channel),
        String(s.messages),
        `${s.bytes} B`,
        s.updatedAt,
        s.active ? "active" : ""
      ])
    )
  })

/**
 * `kern sessions list`'s output, the names loaded by `load`. No import of the loader here: a dynamic import in this module
 * would make esbuild wrap the quick bundle's modules lazily and keep whole packages it now leaves out.
 */
export const listing = (args: SessionsArgs, load: NamesLoader) =>
  Effect.gen(function*() {
    const { fileExists } = yield* AgentConfig.AgentConfig
    if (!fileExists) {
      return yield* new NotAnAgentFolder({ dir: args.dir })
    }
    return yield* render(args.json, args.conversation ?? Option.none(), load).pipe(Effect.provide(storeLayer))
  }).pipe(Effect.provide(AgentConfig.layer(args.dir)))

/** `kern sessions list`, printed. */
export const list = (args: SessionsArgs, load: NamesLoader) => Effect.flatMap(listing(args, load), Console.log)
