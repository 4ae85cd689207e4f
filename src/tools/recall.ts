import { Effect, Ref, Schema } from "effect"
import { RunContext } from "../kernel/RunContext.js"
import { toolFailure } from "../kernel/ToolFailure.js"
import { Recall, type RecallError } from "../recall/Recall.js"
import { loadText, searchText, toolWholeHit } from "../recall/format.js"
import { RecallDate } from "../recall/schema.js"
import type { ToolMetadata } from "./toolMetadata.js"

/** Characters of one load page: under the output compaction threshold, so a page reaches the model whole. */
export const recallLoadChars = 10_000

const Index = Schema.Int.pipe(Schema.nonNegative())

export const RecallArgs = Schema.Struct({
  mode: Schema.optional(Schema.Literal("search", "load")).annotations({
    description: "search: find past conversations and knowledge/notes files; load: read a session's messages " +
      "(the default when sessionId is given without a query)"
  }),
  query: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "search: what to look for, in plain words (matched by meaning and by keywords)"
  })),
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 20)).annotations({ description: "search: hits to return (default 5)" })),
  after: Schema.optional(RecallDate.annotations({ description: "search: only what happened on or after this date (YYYY-MM-DD)" })),
  before: Schema.optional(RecallDate.annotations({ description: "search: only what happened on or before this date (YYYY-MM-DD)" })),
  sessionId: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({ description: "load: the session id a hit named" })),
  messageStart: Schema.optional(Index.annotations({ description: "load: the first message to read" })),
  messageEnd: Schema.optional(Index.annotations({ description: "load: the last message to read (inclusive)" }))
})
export type RecallArgs = typeof RecallArgs.Type

export const recallTool: ToolMetadata = {
  toolId: "recall",
  name: "Recall",
  description: "Search everything you have talked about in past sessions (and your knowledge/ and notes/ files) by " +
    "meaning and keywords: { query, limit?, after?, before? } gives hits with session id, message range and time. " +
    "Then read the full messages with { sessionId, messageStart, messageEnd }; a long range comes in " +
    "pages, each naming the next messageStart.",
  safetyClass: "READ_ONLY",
  idempotent: true,
  timeoutMs: 30_000,
  scope: "read"
}

const failure = (error: RecallError) =>
  toolFailure(error.reason === "not_found" ? "NOT_FOUND" : "UNEXPECTED", error.message)

/** recall({ query } | { sessionId, messageStart, messageEnd }): the agent's memory of conversations. */
export const recall = Effect.fn("kern.tools.recall")(function*(args: RecallArgs) {
  const service = yield* Recall
  // A conversation that is not the operator's searches and loads only its own sessions (Recall's one door).
  const ctx = yield* RunContext
  // Seed 000's load form names no mode: a session and a range without a query is a load.
  const mode = args.mode ?? (args.query === undefined && args.sessionId !== undefined ? "load" : "search")
  if (mode === "load") {
    if (args.sessionId === undefined || args.messageStart === undefined || args.messageEnd === undefined) {
      return yield* toolFailure("VALIDATION_ERROR", "load needs sessionId, messageStart and messageEnd (from a search hit)")
    }
    if (args.messageEnd < args.messageStart) {
      return yield* toolFailure("VALIDATION_ERROR", `messageEnd (${args.messageEnd}) is before messageStart (${args.messageStart})`)
    }
    const result = yield* service.load({
      sessionId: args.sessionId,
      messageStart: args.messageStart,
      messageEnd: args.messageEnd,
      maxChars: recallLoadChars
    }, ctx).pipe(Effect.mapError(failure))
    return { ...result, text: loadText(result, args.messageEnd) }
  }
  if (args.query === undefined) return yield* toolFailure("VALIDATION_ERROR", "search needs a query")
  // What the model has raw in its context is not worth finding again: the current session from the context's cut
  // on (what was trimmed before it stands only as summaries, so it is found). Outside a turn, the whole session.
  const windowStart = ctx.windowStart === undefined ? 0 : yield* Ref.get(ctx.windowStart)
  const exclude = ctx.sessionId === "" ? [] : [{ sessionId: ctx.sessionId, messageStart: windowStart, messageEnd: Number.MAX_SAFE_INTEGER }]
  const result = yield* service.search({
    query: args.query,
    ...(args.limit === undefined ? {} : { limit: args.limit }),
    ...(args.after === undefined ? {} : { after: args.after }),
    ...(args.before === undefined ? {} : { before: args.before }),
    exclude
  }, ctx).pipe(Effect.mapError(failure))
  return { ...result, text: searchText(result, toolWholeHit) }
})
