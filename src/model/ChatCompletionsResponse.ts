import { type Response, Tool } from "@effect/ai"
import { Either } from "effect"
import type { ChatCompletion, Usage } from "./ChatCompletionsWire.js"
import { noOutput, type ProviderContext, ProviderError } from "./ProviderError.js"

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
  const cachedInputTokens = usage?.prompt_tokens_details?.cached_tokens ?? undefined
  return {
    inputTokens,
    outputTokens,
    totalTokens: usage?.total_tokens ??
      (inputTokens === undefined && outputTokens === undefined ? undefined : (inputTokens ?? 0) + (outputTokens ?? 0)),
    ...(reasoningTokens === undefined ? {} : { reasoningTokens }),
    ...(cachedInputTokens === undefined ? {} : { cachedInputTokens })
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

/** Tool arguments as the model wrote them, parsed without prototype pollution; "" means no arguments. */
export const parseToolParams = (
  context: ProviderContext,
  name: string,
  args: string
): Either.Either<unknown, ProviderError> =>
  Either.try({
    try: () => Tool.unsafeSecureJsonParse(args.trim() === "" ? "{}" : args),
    catch: () =>
      new ProviderError({
        reason: "provider",
        message: `${context.provider} sent arguments for tool ${name} that are not valid JSON: ${args.slice(0, 120)}`
      })
  })

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
      const params = yield* parseToolParams(context, call.function.name, call.function.arguments)
      parts.push(toolCallPart(call.id, call.function.name, params))
    }
    const reason = finishReason(choice?.finish_reason, toolCalls.length > 0)
    if (text.trim() === "" && toolCalls.length === 0) {
      return yield* Either.left(noOutput(context, choice?.finish_reason ?? "none"))
    }
    parts.push({ type: "finish", reason, usage: usageOf(completion.usage) })
    return parts
  })
