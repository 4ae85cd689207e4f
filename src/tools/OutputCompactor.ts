import { Effect } from "effect"
import type { ToolFailure } from "../kernel/ToolFailure.js"
import { type ArtifactId, ArtifactStore } from "./ArtifactStore.js"
import {
  type CompactionOptions,
  compactionHeader,
  compactText,
  defaultCompactionOptions,
  shouldCompact,
  utf8Bytes
} from "./compaction.js"
import { ContextStats } from "./ContextStats.js"

export interface CompactInput {
  readonly sessionId: string
  readonly toolId: string
  readonly text: string
  readonly isError: boolean
}

export interface CompactedOutput {
  /** What the model sees. */
  readonly text: string
  /** Where the full output is kept, when it was stored. */
  readonly artifactId?: ArtifactId
  readonly originalBytes: number
  readonly compactedBytes: number
  /** Set when the output repeats an earlier one of the session and was replaced by a reference. */
  readonly duplicateOf?: ArtifactId
}

/** Outputs this small are neither stored nor replaced by a reference (the reference would not be shorter). */
export const minStoredBytes = 512

/**
 * The step between a tool's result and the model: stores the full output as an artifact, replaces a repeat of an
 * earlier output of the session by a reference, and compacts an oversized output (seed 004).
 */
export class OutputCompactor extends Effect.Service<OutputCompactor>()("kern/tools/OutputCompactor", {
  effect: Effect.gen(function*() {
    const artifacts = yield* ArtifactStore
    const stats = yield* ContextStats
    const compact = Effect.fn("kern.tools.compactToolOutput")(function*(
      input: CompactInput,
      options: CompactionOptions = defaultCompactionOptions
    ) {
      const originalBytes = utf8Bytes(input.text)
      if (originalBytes < minStoredBytes) return { text: input.text, originalBytes, compactedBytes: originalBytes }
      const stored = yield* artifacts.put(input)
      if (stored.duplicateOf !== undefined) {
        const text = `[identical to an earlier ${input.toolId} output in this session (${originalBytes} bytes), ` +
          `not repeated; artifact ${stored.artifactId}: retrieve_tool_output({ "artifactId": "${stored.artifactId}" })]`
        const compactedBytes = utf8Bytes(text)
        yield* stats.recordDuplicate(input.sessionId, originalBytes, compactedBytes)
        return { text, artifactId: stored.artifactId, originalBytes, compactedBytes, duplicateOf: stored.duplicateOf }
      }
      if (!shouldCompact(originalBytes, input.isError, options)) {
        return { text: input.text, artifactId: stored.artifactId, originalBytes, compactedBytes: originalBytes }
      }
      const body = compactText(input.text, input.toolId === "bash", options)
      const text = `${compactionHeader(originalBytes, utf8Bytes(body), stored.artifactId)}\n${body}`
      const compactedBytes = utf8Bytes(text)
      yield* stats.recordCompaction(input.sessionId, originalBytes, compactedBytes)
      return { text, artifactId: stored.artifactId, originalBytes, compactedBytes }
    })
    return { compact } as const
  })
}) {}

/** What the agent loop calls on every tool output before the model sees it. */
export const compactToolOutput = (
  input: CompactInput,
  options?: CompactionOptions
): Effect.Effect<CompactedOutput, ToolFailure, OutputCompactor> =>
  Effect.flatMap(OutputCompactor, (compactor) => compactor.compact(input, options))
