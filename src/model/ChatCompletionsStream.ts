import type { Response } from "@effect/ai"
import { Either } from "effect"
import { finishPart, finishReason, metadataPart, parseToolParams, toolCallPart } from "./ChatCompletionsResponse.js"
import type { ChatCompletionChunk, ToolCallDelta, Usage } from "./ChatCompletionsWire.js"
import { noOutput, type ProviderContext, ProviderError, streamCut } from "./ProviderError.js"

interface ToolCallDraft {
  readonly id: string
  name: string
  args: string
  started: boolean
}

type Parts = Array<Response.StreamPartEncoded>

/**
 * Turns streamed Chat Completions chunks into @effect/ai stream parts. Tool-call fragments arrive keyed by
 * `index`; each call is announced once its name is known, its argument text forwarded as deltas, and the
 * finished call (arguments parsed; text that is not a JSON object kept as written) emitted when the choice finishes. One accumulator serves one stream.
 */
export const makeStreamAccumulator = (context: ProviderContext) => {
  let responseId = "chatcmpl"
  let metadataSent = false
  let textId: string | undefined
  let reasoningId: string | undefined
  let segments = 0
  let sawText = false
  const drafts: Array<ToolCallDraft> = []
  const byIndex = new Map<number, ToolCallDraft>()
  let flushed = false
  let reason: string | null | undefined
  let usage: Usage | null | undefined

  const closeText = (parts: Parts) => {
    if (textId !== undefined) parts.push({ type: "text-end", id: textId })
    textId = undefined
  }
  const closeReasoning = (parts: Parts) => {
    if (reasoningId !== undefined) parts.push({ type: "reasoning-end", id: reasoningId })
    reasoningId = undefined
  }

  const onText = (parts: Parts, delta: string) => {
    closeReasoning(parts)
    if (textId === undefined) {
      textId = `${responseId}:text:${segments++}`
      parts.push({ type: "text-start", id: textId })
    }
    if (delta.trim() !== "") sawText = true
    parts.push({ type: "text-delta", id: textId, delta })
  }

  const onReasoning = (parts: Parts, delta: string) => {
    closeText(parts)
    if (reasoningId === undefined) {
      reasoningId = `${responseId}:reasoning:${segments++}`
      parts.push({ type: "reasoning-start", id: reasoningId })
    }
    parts.push({ type: "reasoning-delta", id: reasoningId, delta })
  }

  const onToolCall = (parts: Parts, delta: ToolCallDelta) => {
    closeText(parts)
    closeReasoning(parts)
    let draft = byIndex.get(delta.index)
    // A new id at a known index is a new call (some servers number every call 0).
    if (draft === undefined || (delta.id != null && delta.id !== "" && delta.id !== draft.id)) {
      draft = { id: delta.id || `call_${drafts.length}`, name: "", args: "", started: false }
      drafts.push(draft)
      byIndex.set(delta.index, draft)
    }
    if (delta.function?.name != null && draft.name === "") draft.name = delta.function.name
    const args = delta.function?.arguments ?? ""
    draft.args += args
    if (!draft.started && draft.name !== "") {
      draft.started = true
      parts.push({ type: "tool-params-start", id: draft.id, name: draft.name })
      if (draft.args !== "") parts.push({ type: "tool-params-delta", id: draft.id, delta: draft.args })
    } else if (draft.started && args !== "") {
      parts.push({ type: "tool-params-delta", id: draft.id, delta: args })
    }
  }

  const flush = (parts: Parts): Either.Either<void, ProviderError> => {
    if (flushed) return Either.void
    flushed = true
    closeText(parts)
    closeReasoning(parts)
    for (const draft of drafts) {
      if (draft.name === "") {
        return Either.left(
          new ProviderError({ reason: "provider", message: `${context.provider} streamed a tool call without a name` })
        )
      }
      parts.push({ type: "tool-params-end", id: draft.id }, toolCallPart(draft.id, draft.name, parseToolParams(draft.args)))
    }
    return Either.void
  }

  /** The parts one chunk yields. */
  const push = (chunk: ChatCompletionChunk): Either.Either<Parts, ProviderError> => {
    if (chunk.error !== undefined) {
      const code = typeof chunk.error.code === "number" ? chunk.error.code : undefined
      return Either.left(
        new ProviderError({
          reason: code === 429 ? "rate_limit" : code === 401 || code === 403 ? "auth" : code === 402 ? "billing" : "provider",
          ...(code === undefined ? {} : { status: code }),
          message: `${context.provider} failed while streaming: ${chunk.error.message}`
        })
      )
    }
    const parts: Parts = []
    if (!metadataSent) {
      metadataSent = true
      if (chunk.id != null && chunk.id !== "") responseId = chunk.id
      parts.push(metadataPart(chunk.id, chunk.model, chunk.created))
    }
    if (chunk.usage != null) usage = chunk.usage
    for (const choice of chunk.choices) {
      // kern asks for one choice; anything else is ignored.
      if ((choice.index ?? 0) !== 0) continue
      const delta = choice.delta
      const reasoning = delta.reasoning_content ?? delta.reasoning
      if (reasoning != null && reasoning !== "") onReasoning(parts, reasoning)
      if (delta.content != null && delta.content !== "") onText(parts, delta.content)
      for (const call of delta.tool_calls ?? []) onToolCall(parts, call)
      if (choice.finish_reason != null) {
        reason = choice.finish_reason
        const done = flush(parts)
        if (Either.isLeft(done)) return Either.left(done.left)
      }
    }
    return Either.right(parts)
  }

  let doneSeen = false
  /** The server's `[DONE]`: the stream is complete even if no choice said why it finished. */
  const sawDone = () => {
    doneSeen = true
  }

  /** The closing parts once the stream ends (`[DONE]` or end of body). */
  const end = (): Either.Either<Parts, ProviderError> => {
    // Neither [DONE] nor a finish reason: the body ended early (a dropped connection, a proxy timing out).
    if (!doneSeen && reason === undefined) return Either.left(streamCut(context))
    const parts: Parts = []
    const done = flush(parts)
    if (Either.isLeft(done)) return Either.left(done.left)
    if (!sawText && drafts.length === 0) return Either.left(noOutput(context, reason ?? "none"))
    parts.push(finishPart(finishReason(reason, drafts.length > 0), usage))
    return Either.right(parts)
  }

  return { push, end, sawDone } as const
}
