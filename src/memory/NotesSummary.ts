import { LanguageModel } from "@effect/ai"
import { FileSystem } from "@effect/platform"
import type { HttpClient } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Clock, Context, Duration, Effect, FiberSet, Layer, Option, Ref, Schema } from "effect"
import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import { AgentConfig } from "../config/AgentConfig.js"
import * as Provider from "../model/Provider.js"
import { SpendAttribution } from "../model/SpendAttribution.js"
import type { SpendGuard } from "../model/SpendGuard.js"
import type { ModelConfigMissing } from "../model/ModelSettings.js"
import { makeFileCache } from "./fileCache.js"
import { keptSpan } from "../kernel/keptSpan.js"
import { waitAtMost } from "../config/waitAtMost.js"

/** How many notes before the latest the summary covers. */
export const summarizedNotes = 5

/** How long a one-shot command waits for the summary it started before it exits. */
export const oneShotWait = Duration.seconds(30)

export interface Summary {
  readonly text: string
  /** The notes it summarizes, e.g. `notes/2026-01-01.md`. */
  readonly sources: ReadonlyArray<string>
  /** Whether it matches the notes as they are now (false: a stale one, served while a new one is made). */
  readonly fresh: boolean
}

const Row = Schema.Struct({ cacheKey: Schema.String, sources: Schema.String, summary: Schema.String })
const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

export const summaryPrompt = (notes: ReadonlyArray<{ readonly name: string; readonly text: string }>): string =>
  [
    "Summarize these daily notes of an AI agent in a few short paragraphs: what happened, decisions, open items. " +
    "Keep names, dates and numbers exact. Answer with the summary only.",
    ...notes.map((note) => `<note name="${note.name}">\n${note.text.trim()}\n</note>`)
  ].join("\n\n")

/**
 * The rolling summary of the notes before the latest (`summaryModel`, else the agent's model), cached in kern.db by
 * the latest note's name and the summarized notes' hashes. On a miss the stale summary is served at once and one
 * regeneration runs in the background; a failed one is logged, never stored, and retried on a later turn.
 */
export const make = Effect.gen(function*() {
  const { paths } = yield* AgentConfig
  const fs = yield* FileSystem.FileSystem
  const sql = yield* SqlClient.SqlClient
  const model = yield* LanguageModel.LanguageModel
  const running = yield* Ref.make(false)
  // The notes are read again, and hashed again, only when they change: `current` runs on every model call.
  const files = yield* makeFileCache
  const hashes = yield* Ref.make<ReadonlyMap<string, { readonly text: string; readonly hash: string }>>(new Map())
  const hashesOf = (notes: ReadonlyArray<{ readonly name: string; readonly text: string }>) =>
    Ref.modify(hashes, (known) => {
      const next = new Map<string, { readonly text: string; readonly hash: string }>()
      for (const { name, text } of notes) {
        const hit = known.get(name)
        next.set(name, hit !== undefined && hit.text === text ? hit : { text, hash: sha256(text) })
      }
      return [[...next.values()].map((entry) => entry.hash), next]
    })
  const background = yield* FiberSet.make()
  const dir = paths.dir

  const stored = sql`SELECT cache_key, sources, summary FROM notes_summary WHERE id = 1`.pipe(
    Effect.flatMap(decodeRows),
    Effect.map((rows) => Option.fromNullable(rows[0]))
  )
  // The row as last read or written here: kern.db is asked again only when the notes moved past it.
  const known = yield* Ref.make(Option.none<typeof Row.Type>())
  const storedFor = (key: string) =>
    Effect.flatMap(Ref.get(known), (row) =>
      Option.isSome(row) && row.value.cacheKey === key ? Effect.succeed(row) : Effect.tap(stored, (fresh) => Ref.set(known, fresh)))

  const generate = (key: string, notes: ReadonlyArray<{ readonly name: string; readonly text: string }>) =>
    Effect.gen(function*() {
      const response = yield* model.generateText({ prompt: summaryPrompt(notes) }).pipe(
        Effect.provideService(SpendAttribution, { purpose: "summary" })
      )
      const text = response.text.trim()
      if (text === "") return yield* Effect.logWarning("kern: the notes summary came back empty; retried on a later turn")
      const now = yield* Clock.currentTimeMillis
      const sources = JSON.stringify(notes.map((note) => note.name))
      yield* sql`INSERT INTO notes_summary (id, cache_key, sources, summary, created_at_ms)
        VALUES (1, ${key}, ${sources}, ${text}, ${now})
        ON CONFLICT (id) DO UPDATE SET cache_key = excluded.cache_key, sources = excluded.sources,
          summary = excluded.summary, created_at_ms = excluded.created_at_ms`
      yield* Ref.set(known, Option.some({ cacheKey: key, sources, summary: text }))
    }).pipe(
      Effect.catchAll((error) => Effect.logWarning(`kern: the notes summary could not be made (retried on a later turn): ${error.message}`)),
      Effect.ensuring(Ref.set(running, false)),
      Effect.withSpan("kern.memory.notesSummary.generate")
    )

  /** The summary to show now: the cached one (fresh or stale), none before there are notes to summarize. */
  /** The notes a summary covers now and the cache key they make; none before there are two notes. */
  const coveredNotes = Effect.gen(function*() {
    const names = yield* files.notes(dir).pipe(Effect.provideService(FileSystem.FileSystem, fs))
    if (names.length < 2) return Option.none()
    const covered = names.slice(-1 - summarizedNotes, -1)
    // Through the door: a note that links into .kern/ or out of the folder, or a FIFO, is left out of the summary.
    const notes = (yield* Effect.forEach(covered, (name) =>
      files.readString(NodePath.join("notes", name), dir).pipe(
        Effect.tap(() => files.skipped.readFine(`notes/${name}`)),
        Effect.map((text) => [{ name: `notes/${name}`, text }]),
        Effect.catchAll((error) => Effect.as(files.skipped.skip("the notes summary", error), []))
      ))).flat()
    const key = `${names.at(-1)}:${(yield* hashesOf(notes)).join(",")}`
    return Option.some({ key, notes })
  })

  const current: Effect.Effect<Option.Option<Summary>> = Effect.gen(function*() {
    const covered = yield* coveredNotes
    if (Option.isNone(covered)) return Option.none()
    const { key, notes } = covered.value
    const row = yield* storedFor(key)
    if (Option.isSome(row) && row.value.cacheKey === key) {
      return Option.some({ text: row.value.summary, sources: notes.map((n) => n.name), fresh: true })
    }
    if (!(yield* Ref.getAndSet(running, true))) yield* FiberSet.run(background, generate(key, notes))
    return Option.map(row, (r) => ({
      text: r.summary,
      sources: Schema.decodeUnknownOption(Schema.parseJson(Schema.Array(Schema.String)))(r.sources).pipe(Option.getOrElse(() => [])),
      fresh: false
    }))
  }).pipe(
    Effect.catchAll((error) => Effect.as(Effect.logWarning(`kern: notes summary left out: ${error.message}`), Option.none())),
    keptSpan("kern.memory.notesSummary.current")
  )

  /** Waits, at most `limit`, for a regeneration in progress (a one-shot command before it exits). */
  const settled = (limit: Duration.DurationInput = oneShotWait) =>
    Effect.asVoid(waitAtMost(FiberSet.awaitEmpty(background), limit))

  /**
   * Makes the summary again now, whatever the cache holds (the operator asked, from the web UI), and answers with
   * it. One at a time: a regeneration already running is waited for first. A failure is logged and the last summary
   * stays.
   */
  const regenerate: Effect.Effect<Option.Option<Summary>> = Effect.gen(function*() {
    yield* FiberSet.awaitEmpty(background)
    const covered = yield* coveredNotes
    if (Option.isNone(covered)) return Option.none()
    if (!(yield* Ref.getAndSet(running, true))) {
      yield* FiberSet.run(background, generate(covered.value.key, covered.value.notes))
    }
    yield* FiberSet.awaitEmpty(background)
    return yield* current
  }).pipe(
    Effect.catchAll((error) => Effect.as(Effect.logWarning(`kern: notes summary not regenerated: ${error.message}`), Option.none())),
    Effect.withSpan("kern.memory.notesSummary.regenerate")
  )

  return { current, settled, regenerate } as const
})

export class NotesSummary extends Context.Tag("kern/memory/NotesSummary")<
  NotesSummary,
  Effect.Effect.Success<typeof make>
>() {}

/** NotesSummary with its own model (`summaryModel`, else `model`), private to it. */
export const layer: Layer.Layer<
  NotesSummary,
  ModelConfigMissing,
  AgentConfig | FileSystem.FileSystem | SqlClient.SqlClient | HttpClient.HttpClient | SpendGuard
> = Layer.scoped(NotesSummary, make).pipe(Layer.provide(Provider.summaryLayer))

/** No notes summary at all (a bare prompt in tests and tools): nothing to serve, nothing to wait for. */
export const layerNone: Layer.Layer<NotesSummary> = Layer.succeed(
  NotesSummary,
  NotesSummary.of({ current: Effect.succeed(Option.none()), settled: () => Effect.void, regenerate: Effect.succeed(Option.none()) })
)
