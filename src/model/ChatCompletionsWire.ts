import { Schema } from "effect"

// The parts of the Chat Completions wire format kern reads. Fields are lenient where servers differ
// (Ollama, vLLM, llama.cpp, LiteLLM and OpenRouter all leave different ones null or out).

const OptionalString = Schema.optional(Schema.NullOr(Schema.String))
const OptionalNumber = Schema.optional(Schema.NullOr(Schema.Number))

/**
 * `prompt_tokens` counts every prompt token, cached ones included. Cache reads are `prompt_tokens_details
 * .cached_tokens` and writes `prompt_tokens_details.cache_write_tokens` (OpenRouter); servers relaying Anthropic's
 * own names (LiteLLM) say `cache_read_input_tokens` and `cache_creation_input_tokens` beside them.
 */
export const Usage = Schema.Struct({
  prompt_tokens: OptionalNumber,
  completion_tokens: OptionalNumber,
  total_tokens: OptionalNumber,
  prompt_tokens_details: Schema.optional(Schema.NullOr(Schema.Struct({
    cached_tokens: OptionalNumber,
    cache_write_tokens: OptionalNumber
  }))),
  completion_tokens_details: Schema.optional(Schema.NullOr(Schema.Struct({ reasoning_tokens: OptionalNumber }))),
  cache_read_input_tokens: OptionalNumber,
  cache_creation_input_tokens: OptionalNumber
})
export type Usage = typeof Usage.Type

export const ToolCall = Schema.Struct({
  id: Schema.String,
  type: Schema.optional(Schema.String),
  function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
})

export const ResponseMessage = Schema.Struct({
  role: OptionalString,
  content: OptionalString,
  /** Reasoning text: `reasoning_content` (DeepSeek, vLLM) or `reasoning` (OpenRouter, Ollama). */
  reasoning_content: OptionalString,
  reasoning: OptionalString,
  tool_calls: Schema.optional(Schema.NullOr(Schema.Array(ToolCall)))
})

export const ChatCompletion = Schema.Struct({
  id: OptionalString,
  model: OptionalString,
  created: OptionalNumber,
  choices: Schema.Array(Schema.Struct({
    index: OptionalNumber,
    message: ResponseMessage,
    finish_reason: OptionalString
  })),
  usage: Schema.optional(Schema.NullOr(Usage))
})
export type ChatCompletion = typeof ChatCompletion.Type

export const ToolCallDelta = Schema.Struct({
  index: Schema.Number,
  id: OptionalString,
  type: OptionalString,
  function: Schema.optional(Schema.NullOr(Schema.Struct({ name: OptionalString, arguments: OptionalString })))
})
export type ToolCallDelta = typeof ToolCallDelta.Type

/** An error sent inside a 200 stream (OpenRouter does this when a request fails mid-way). */
export const StreamError = Schema.Struct({
  message: Schema.String,
  code: Schema.optional(Schema.Union(Schema.Number, Schema.String, Schema.Null))
})

export const ChatCompletionChunk = Schema.Struct({
  id: OptionalString,
  model: OptionalString,
  created: OptionalNumber,
  choices: Schema.optionalWith(
    Schema.Array(Schema.Struct({
      index: OptionalNumber,
      delta: Schema.optionalWith(
        Schema.Struct({
          role: OptionalString,
          content: OptionalString,
          reasoning_content: OptionalString,
          reasoning: OptionalString,
          tool_calls: Schema.optional(Schema.NullOr(Schema.Array(ToolCallDelta)))
        }),
        { default: () => ({}) }
      ),
      finish_reason: OptionalString
    })),
    { default: () => [] }
  ),
  usage: Schema.optional(Schema.NullOr(Usage)),
  error: Schema.optional(StreamError)
})
export type ChatCompletionChunk = typeof ChatCompletionChunk.Type

// Request side: plain types, encoded with JSON.stringify.

/** A prompt-cache breakpoint as OpenRouter takes it for Anthropic models: on the last content part it covers. */
export interface WireCacheControl {
  readonly type: "ephemeral"
  readonly ttl?: "5m" | "1h"
}

export interface WireTextPart {
  readonly type: "text"
  readonly text: string
  readonly cache_control?: WireCacheControl
}

export type WireContentPart =
  | WireTextPart
  | {
    readonly type: "image_url"
    readonly image_url: { readonly url: string }
    readonly cache_control?: WireCacheControl
  }
  | {
    /** A PDF, as OpenAI's and OpenRouter's Chat Completions take one: its bytes as a data URL. */
    readonly type: "file"
    readonly file: { readonly filename: string; readonly file_data: string }
    readonly cache_control?: WireCacheControl
  }

// Content is a plain string except on a message carrying a cache breakpoint, whose content is a parts array.
export type WireMessage =
  | { readonly role: "system"; readonly content: string | ReadonlyArray<WireTextPart> }
  | { readonly role: "user"; readonly content: string | ReadonlyArray<WireContentPart> }
  | {
    readonly role: "assistant"
    readonly content: string | ReadonlyArray<WireTextPart> | null
    readonly tool_calls?: ReadonlyArray<{
      readonly id: string
      readonly type: "function"
      readonly function: { readonly name: string; readonly arguments: string }
    }>
  }
  | { readonly role: "tool"; readonly tool_call_id: string; readonly content: string | ReadonlyArray<WireTextPart> }

export interface WireTool {
  readonly type: "function"
  readonly function: { readonly name: string; readonly description?: string; readonly parameters: unknown }
}

export type WireToolChoice =
  | "auto"
  | "none"
  | "required"
  | { readonly type: "function"; readonly function: { readonly name: string } }

export interface ChatRequest {
  readonly model: string
  readonly messages: ReadonlyArray<WireMessage>
  readonly tools?: ReadonlyArray<WireTool>
  readonly tool_choice?: WireToolChoice
  readonly response_format?: {
    readonly type: "json_schema"
    readonly json_schema: { readonly name: string; readonly schema: unknown; readonly strict: boolean }
  }
  readonly stream?: boolean
  readonly stream_options?: { readonly include_usage: boolean }
}
