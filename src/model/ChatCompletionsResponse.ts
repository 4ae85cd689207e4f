import type { Response } from "@effect/ai"
import { Either } from "effect"
import { toolCallParams } from "../kernel/toolArgs.js"
import type { ChatCompletion, Usage } from "./ChatCompletionsWire.js"
import { cacheWriteMetadata } from "./finishUsage.js"
import { noOutput, type ProviderContext, type ProviderError } from "./ProviderError.js"

// Chat Completions answers → @effect/ai response parts (encoded form, as LanguageModel.make expects).

export const finishReason = (reason: string | null | undefined, hasToolCalls: boolean): Response.FinishReason => {
  switch (reason) {
    case "tool_calls":
    case "function_call":
      return "tool-calls"
    case "stop":
    case null:
    case undefined:
      // Some servers (Ollama) say "stop" after tool calls.
      return hasToolCalls ? "tool-calls" : "stop"
    case "length":
      return "length"
    case "content_filter":
      return "content-filter"
    default:
      return hasToolCalls ? "tool-calls" : "unknown"
  }
}

export const usageOf = (usage: Usage | null | undefined): Response.FinishPartEncoded["usage"] => {
  const inputTokens = usage?.prompt_tokens ?? undefined
  const outputTokens = usage?.completion_tokens ?? undefined
  const reasoningTokens = usage?.completion_tokens_details?.reasoning_tokens ?? undefined
  const cachedInputTokens = usage?.prompt_tokens_details?.cached_tokens ?? usage?.cache_read_input_tokens ?? undefined
  return {
    inputTokens,
    outputTokens,
    totalTokens: usage?.total_tokens ??
      (inputTokens === undefined && outputTokens === undefined ? undefined : (inputTokens ?? 0) + (outputTokens ?? 0)),
    ...(reasoningTokens === undefined ? {} : { reasoningTokens }),
    ...(cachedInputTokens === undefined ? {} : { cachedInputTokens })
  }
}

/** Prompt tokens written to the provider's cache, under either name servers use for them. */
export const cacheWriteTokensOf = (usage: Usage | null | undefined): number | undefined =>
  usage?.prompt_tokens_details?.cache_write_tokens ?? usage?.cache_creation_input_tokens ?? undefined

/** The closing part: the usage @effect/ai knows, and cache writes (which it has no field for) in the metadata. */
export const finishPart = (
  reason: Response.FinishReason,
  usage: Usage | null | undefined
): Response.FinishPartEncoded => {
  const writes = cacheWriteTokensOf(usage)
  return {
    type: "finish",
    reason,
    usage: usageOf(usage),
    ...(writes === undefined ? {} : { metadata: cacheWriteMetadata(writes) })
  }
}

export const metadataPart = (
  id: string | null | undefined,
  model: string | null | undefined,
  created: number | null | undefined
): Response.ResponseMetadataPartEncoded => ({
  type: "response-metadata",
  ...(id == null ? {} : { id }),
  ...(model == null ? {} : { modelId: model }),
  ...(created == null ? {} : { timestamp: new Date(created * 1000).toISOString() })
})

/**
 * Tool arguments as the model wrote them, parsed without prototype pollution. Text that is not a JSON object is not
 * this provider's failure but the model's mistake: it travels as the model wrote it (see `toolCallParams`) and the
 * executor answers the call with a VALIDATION_ERROR the model can read.
 */
export const parseToolParams = (args: string): unknown => toolCallParams(args)

export const toolCallPart = (id: string, name: string, params: unknown): Response.ToolCallPartEncoded => ({
  type: "tool-call",
  id,
  name,
  params
})

/** A whole (non-streamed) completion as response parts. */
export const fromCompletion = (
  context: ProviderContext,
  completion: ChatCompletion
): Either.Either<Array<Response.PartEncoded>, ProviderError> =>
  Either.gen(function*() {
    const choice = completion.choices[0]
    const message = choice?.message
    const parts: Array<Response.PartEncoded> = [metadataPart(completion.id, completion.model, completion.created)]
    const reasoning = message?.reasoning_content ?? message?.reasoning
    if (reasoning != null && reasoning !== "") parts.push({ type: "reasoning", text: reasoning })
    const text = message?.content ?? ""
    if (text !== "") parts.push({ type: "text", text })
    const toolCalls = message?.tool_calls ?? []
    for (const call of toolCalls) {
      parts.push(toolCallPart(call.id, call.function.name, parseToolParams(call.function.arguments)))
    }
    const reason = finishReason(choice?.finish_reason, toolCalls.length > 0)
    if (text.trim() === "" && toolCalls.length === 0) {
      return yield* Either.left(noOutput(context, choice?.finish_reason ?? "none"))
    }
    parts.push(finishPart(reason, completion.usage))
    return parts
  })
