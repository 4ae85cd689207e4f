import { HttpApiBuilder } from "@effect/platform"
import { Effect, Schema } from "effect"
import { Recall, type RecallError } from "../../../recall/Recall.js"
import { SearchRequest } from "../../../recall/schema.js"
import { badRequest, Conflict, invalid, NotFound, ServerError } from "../ApiError.js"
import { KernApi } from "../KernApi.js"

// Recall runs in this process (the one holding the folder), so its own figures say whether a backfill runs.
const recallOff = new Conflict({ error: "recall is off (\"recall\": false in .kern/config.json)" })

const recallFailed = (error: RecallError) =>
  error.reason === "not_found" ? new NotFound({ error: error.message }) : new ServerError({ error: error.message })

/** The recall index's figures, and a search over it. */
export const layer = HttpApiBuilder.group(KernApi, "recall", (handlers) =>
  Effect.gen(function*() {
    const recall = yield* Recall
    return handlers
      .handle("stats", () => recall.enabled ? recall.stats.pipe(Effect.mapError(recallFailed)) : Effect.fail(recallOff))
      .handle("search", ({ urlParams }) =>
        Effect.gen(function*() {
          if (!recall.enabled) return yield* recallOff
          const text = (urlParams.q ?? "").trim()
          if (text === "") return yield* badRequest("q", "q: missing (the words to search for)")
          const request = yield* Schema.decodeUnknown(SearchRequest)({
            query: text,
            limit: urlParams.limit ?? 5,
            ...(urlParams.after === undefined ? {} : { after: urlParams.after }),
            ...(urlParams.before === undefined ? {} : { before: urlParams.before })
          }).pipe(Effect.mapError(invalid("q")))
          return yield* recall.search(request).pipe(Effect.mapError(recallFailed))
        }))
  }))
