import type { SqlClient } from "@effect/sql"
import { Effect, Either, Option } from "effect"
import type { LoadedConfig } from "../config/AgentConfig.js"
import { embeddingChoice } from "./embeddingChoice.js"
import * as RecallStoreForClient from "./storeForClient.js"
import type { RecallStats } from "./schema.js"
import { notedBackfill, notedKeywordReason, readStats } from "./stats.js"

/**
 * The recall figures `kern status` shows, from kern.db alone (no embedder is built, no request made): the model
 * the config names, keyword-only when it names none or a runtime found its endpoint missing, and the running
 * agent's backfill when `holderAlive`.
 */
export const recallStatus = (
  loaded: Pick<LoadedConfig, "config" | "env">,
  holderAlive: boolean
): Effect.Effect<RecallStats, import("./RecallStore.js").RecallStoreError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const store = yield* RecallStoreForClient.make
    const choice = embeddingChoice(loaded)
    const model = Either.match(choice, { onLeft: () => Option.none<string>(), onRight: (s) => Option.some(s.model) })
    const keywordReason = Either.isLeft(choice)
      ? Option.some(choice.left)
      : Option.isSome(store.vectorsUnavailable)
      ? Option.some(store.vectorsUnavailable.value.reason)
      : yield* notedKeywordReason(store, model)
    return yield* readStats(store, {
      model,
      keywordReason,
      lastError: Option.none(),
      backfillRunning: yield* notedBackfill(store, holderAlive)
    })
  })
