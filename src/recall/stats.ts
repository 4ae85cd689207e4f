import { Effect, Option } from "effect"
import type { RecallStoreError, RecallStoreShape } from "./RecallStore.js"
import { EmbeddingStatus, RecallStats } from "./schema.js"

const iso = (ms: number) => new Date(ms).toISOString()

/** Why vectors are off for `model`, as a process noted it in kern.db (the note names the model it is about). */
export const notedKeywordReason = (store: RecallStoreShape, model: Option.Option<string>) =>
  Effect.map(store.note("keyword_reason"), (noted) =>
    Option.flatMap(noted, (text) => {
      const [about, ...reason] = text.split("\t")
      return Option.isSome(model) && about === model.value ? Option.some(reason.join("\t")) : Option.none()
    }))

export const keywordNote = (model: Option.Option<string>, reason: string) => `${Option.getOrElse(model, () => "")}\t${reason}`

export interface StatsInput {
  readonly model: Option.Option<string>
  /** Set: keyword-only, for this reason. */
  readonly keywordReason: Option.Option<string>
  readonly lastError: Option.Option<string>
  readonly backfillRunning: boolean
}

/** The index's figures from the store, with the embedding side as the caller knows it. */
export const readStats = (store: RecallStoreShape, input: StatsInput): Effect.Effect<RecallStats, RecallStoreError> =>
  Effect.gen(function*() {
    const counts = yield* store.counts
    const space = yield* store.vectorSpace
    const model = Option.getOrNull(input.model)
    const embedding = Option.isSome(input.keywordReason)
      ? new EmbeddingStatus({ mode: "keyword", model, dimension: null, reason: input.keywordReason.value })
      : new EmbeddingStatus({
        mode: "vectors",
        model,
        dimension: Option.match(space, { onNone: () => null, onSome: (s) => (s.model === model ? s.dimension : null) }),
        reason: Option.getOrNull(input.lastError)
      })
    return new RecallStats({
      messages: counts.messages,
      chunks: counts.chunks,
      unembedded: counts.unembedded,
      sessions: counts.sessions,
      files: counts.files,
      from: counts.fromMs === null ? null : iso(counts.fromMs),
      to: counts.toMs === null ? null : iso(counts.toMs),
      backfillRunning: input.backfillRunning,
      embedding
    })
  }).pipe(Effect.withSpan("kern.recall.stats"))

/** Whether the live runtime holding the folder noted a backfill in progress. */
export const notedBackfill = (store: RecallStoreShape, holderAlive: boolean) =>
  holderAlive ? Effect.map(store.note("backfill"), Option.isSome) : Effect.succeed(false)
