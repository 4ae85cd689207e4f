import { Effect, Either, Schema } from "effect"
import { confinedAudience } from "../kernel/Audience.js"
import { RunContext } from "../kernel/RunContext.js"
import { toolFailure } from "../kernel/ToolFailure.js"
import { ArtifactStore } from "./ArtifactStore.js"
import { compilePattern, lineMatcher } from "./regexWorker.js"
import { numberLine, splitLines } from "./textFile.js"
import type { ToolMetadata } from "./toolMetadata.js"
import { counted } from "../config/counted.js"

export const RetrieveToolOutputArgs = Schema.Struct({
  artifactId: Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "The artifact id from a compacted output's header (art_…)"
  }),
  offset: Schema.optionalWith(
    Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)).annotations({ description: "First line (or first match with grep), 1-indexed" }),
    { default: () => 1 }
  ),
  limit: Schema.optionalWith(
    Schema.Int.pipe(Schema.between(1, 5000)).annotations({ description: "Most lines to return (default 200)" }),
    { default: () => 200 }
  ),
  grep: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "Only lines matching this regular expression, with their line numbers"
  }))
})
export type RetrieveToolOutputArgs = typeof RetrieveToolOutputArgs.Type

export const retrieveToolOutputTool: ToolMetadata = {
  toolId: "retrieve_tool_output",
  name: "RetrieveToolOutput",
  description: "Reopen the full output of an earlier tool call that was compacted or replaced by a reference: a " +
    "range of its lines, or the lines matching a regular expression.",
  safetyClass: "READ_ONLY",
  idempotent: true,
  timeoutMs: 10_000,
  scope: "read"
}

export interface RetrieveToolOutputOutput {
  readonly artifactId: string
  readonly totalLines: number
  readonly shown: number
  readonly nextOffset?: number
  readonly text: string
}

/** Stays under the compaction threshold, so a retrieved page is never compacted again. */
const maxTextBytes = 11_000

/** A `grep` V8's linear engine cannot run is matched in a worker thread, stopped at the call's timeout. */
export const retrieveToolOutput = Effect.fn("kern.tools.retrieve_tool_output")(function*(args: RetrieveToolOutputArgs) {
  const store = yield* ArtifactStore
  const ctx = yield* RunContext
  const content = yield* store.get(args.artifactId, confinedAudience(ctx)?.conversationId)
  const lines = splitLines(content)
  let candidates = lines.map((text, index) => ({ number: index + 1, text }))
  if (args.grep !== undefined) {
    const pattern = compilePattern(args.grep)
    if (Either.isLeft(pattern)) {
      return yield* toolFailure("VALIDATION_ERROR", `grep is not a valid regular expression: ${pattern.left}`)
    }
    const matcher = yield* lineMatcher(pattern.right)
    // Lines hold no `\n`, so joined they come back one for one.
    const [numbers = []] = yield* matcher.matchLines([lines.join("\n")])
    candidates = numbers.flatMap((number) => candidates.slice(number - 1, number))
  }
  const page = candidates.slice(args.offset - 1, args.offset - 1 + args.limit)
  const width = String(lines.length).length
  const out: Array<string> = []
  let used = 0
  for (const line of page) {
    const text = numberLine(line.number, line.text, width)
    if (out.length > 0 && used + text.length + 1 > maxTextBytes) break
    out.push(text)
    used += text.length + 1
  }
  const next = args.offset - 1 + out.length
  const nextOffset = next < candidates.length ? next + 1 : undefined
  const unit = args.grep === undefined ? "lines" : "matching lines"
  const header = `${args.artifactId}: ${counted(lines.length, "line")}` +
    (args.grep === undefined ? "" : `, ${candidates.length} matching ${JSON.stringify(args.grep)}`)
  const footer = nextOffset === undefined ? [] : [`[${candidates.length - next} more ${unit}; continue with offset ${nextOffset}]`]
  const text = [header, ...(out.length === 0 ? [`(no ${unit} from offset ${args.offset})`] : out), ...footer].join("\n")
  const base = { artifactId: args.artifactId, totalLines: lines.length, shown: out.length, text }
  const output: RetrieveToolOutputOutput = nextOffset === undefined ? base : { ...base, nextOffset }
  return output
}, Effect.scoped)
