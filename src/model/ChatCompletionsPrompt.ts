import { AiError, type LanguageModel, type Prompt, Tool } from "@effect/ai"
import { Effect, Encoding } from "effect"
import type {
  ChatRequest,
  WireCacheControl,
  WireContentPart,
  WireMessage,
  WireTextPart,
  WireTool,
  WireToolChoice
} from "./ChatCompletionsWire.js"

const malformed = (description: string) =>
  new AiError.MalformedInput({ module: "ChatCompletions", method: "prepareRequest", description })

/** A file part's data as a URL: its own when it has one, else a base64 data URL. */
const imageUrl = (part: Prompt.FilePart): string => {
  const mediaType = part.mediaType === "image/*" ? "image/jpeg" : part.mediaType
  if (part.data instanceof URL) return part.data.toString()
  if (part.data instanceof Uint8Array) return `data:${mediaType};base64,${Encoding.encodeBase64(part.data)}`
  return /^(https?:|data:)/.test(part.data) ? part.data : `data:${mediaType};base64,${part.data}`
}

const userContent = (message: Prompt.UserMessage) =>
  Effect.gen(function*() {
    const parts: Array<WireContentPart> = []
    for (const part of message.content) {
      if (part.type === "text") {
        parts.push({ type: "text", text: part.text })
      } else if (part.mediaType.startsWith("image/")) {
        parts.push({ type: "image_url", image_url: { url: imageUrl(part) } })
      } else if (part.mediaType === "application/pdf" && !(part.data instanceof URL)) {
        // OpenAI's and OpenRouter's shape; kern sends PDFs as parts only to those (src/media/promptMedia.ts).
        parts.push({ type: "file", file: { filename: part.fileName ?? "document.pdf", file_data: imageUrl(part) } })
      } else {
        return yield* malformed(`Chat Completions cannot send a file of type ${part.mediaType}; only images and PDFs`)
      }
    }
    // Plain text goes as a string: some servers (older Ollama, llama.cpp) reject content arrays.
    return parts.every((part) => part.type === "text")
      ? parts.map((part) => part.type === "text" ? part.text : "").join("\n")
      : parts
  })

/** A tool result as the model reads it: text stays text, anything else is JSON. */
export const toolResultContent = (result: unknown): string =>
  typeof result === "string" ? result : JSON.stringify(result) ?? "null"

const assistantMessage = (message: Prompt.AssistantMessage): WireMessage | undefined => {
  const text: Array<string> = []
  const toolCalls: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }> = []
  for (const part of message.content) {
    if (part.type === "text") text.push(part.text)
    if (part.type === "tool-call" && !part.providerExecuted) {
      toolCalls.push({
        id: part.id,
        type: "function",
        function: { name: part.name, arguments: JSON.stringify(part.params ?? {}) }
      })
    }
  }
  if (text.length === 0 && toolCalls.length === 0) return undefined
  return {
    role: "assistant",
    content: text.length === 0 ? null : text.join(""),
    ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls })
  }
}

/**
 * Wire messages already made, serialized and encoded, per prompt message. kern's turn passes the same
 * `Prompt.Message` values from step to step and turn to turn (context/SessionHistory.ts), so with this a step converts,
 * serializes and encodes only the messages that are new, and the body is copied together from the rest: a
 * 1,000-message history costs one copy of its bytes, not a conversion, a JSON.stringify and a UTF-8 encoding of
 * everything (joining the texts and encoding the joined text were ~3.5 ms a step at 1,000 messages). Weakly held: a
 * message no prompt uses any more is forgotten with it. Tools are kept the same way (their JSON Schema is rendered
 * and serialized once).
 */
export interface WireCache {
  /** A message's wire messages as UTF-8 JSON, comma-separated (empty when it has none on the wire). */
  readonly messages: WeakMap<Prompt.Message, Uint8Array>
  /** A tool's wire form as JSON. */
  readonly tools: WeakMap<Tool.Any, string>
  /**
   * The last body's messages: the prompt messages it was made of and their JSON in it (the array's members, without
   * its brackets). The next step's prompt begins with the same messages (the history only grows until the context's
   * cut moves): their JSON is copied in one piece, not message by message (~0.5 ms a step at 1,500 messages).
   */
  last: PreviousMessages | undefined
}

interface PreviousMessages {
  readonly content: ReadonlyArray<Prompt.Message>
  readonly json: Uint8Array
}

export const makeWireCache = (): WireCache => ({ messages: new WeakMap(), tools: new WeakMap(), last: undefined })

const utf8 = new TextEncoder()

/** Byte strings laid end to end in one array. */
const concatBytes = (pieces: ReadonlyArray<Uint8Array>): Uint8Array => {
  let length = 0
  for (const piece of pieces) length += piece.length
  const out = new Uint8Array(length)
  let at = 0
  for (const piece of pieces) {
    out.set(piece, at)
    at += piece.length
  }
  return out
}

const wireOf = (message: Prompt.Message) =>
  Effect.gen(function*() {
    switch (message.role) {
      case "system":
        return [{ role: "system", content: message.content }] satisfies Array<WireMessage>
      case "user":
        return [{ role: "user", content: yield* userContent(message) }] satisfies Array<WireMessage>
      case "assistant": {
        const wire = assistantMessage(message)
        return wire === undefined ? [] : [wire]
      }
      case "tool":
        return message.content.map((part): WireMessage => ({
          role: "tool",
          tool_call_id: part.id,
          content: toolResultContent(part.result)
        }))
    }
  })

/**
 * The cache breakpoint a message carries, where @effect/ai-anthropic reads it (`options.anthropic.cacheControl`,
 * set by context/caching.ts): one mark serves both providers. Anything but an ephemeral mark is no mark.
 */
const cacheControlOf = (message: Prompt.Message): WireCacheControl | undefined => {
  const anthropic = message.options["anthropic"]
  const mark: unknown = anthropic === undefined ? undefined : anthropic["cacheControl"]
  if (typeof mark !== "object" || mark === null || !("type" in mark) || mark.type !== "ephemeral") return undefined
  const ttl = "ttl" in mark && (mark.ttl === "5m" || mark.ttl === "1h") ? mark.ttl : undefined
  return ttl === undefined ? { type: "ephemeral" } : { type: "ephemeral", ttl }
}

const markedText = (text: string, cache_control: WireCacheControl): Array<WireTextPart> => [
  { type: "text", text, cache_control }
]

/**
 * A wire message with the breakpoint on its content: OpenRouter takes `cache_control` on a content part, so the
 * content becomes parts, the last one marked. Nothing carries it where there is no text: an assistant message that
 * only calls tools, or empty text (Anthropic refuses a mark on an empty text block).
 */
const withMark = (wire: WireMessage, mark: WireCacheControl): WireMessage => {
  if (wire.content === "" || wire.content === null) return wire
  if (typeof wire.content === "string") return { ...wire, content: markedText(wire.content, mark) }
  if (wire.role !== "user" || wire.content.length === 0) return wire
  const parts = wire.content
  return { ...wire, content: [...parts.slice(0, -1), { ...parts[parts.length - 1]!, cache_control: mark }] }
}

/** The message's wire messages; a marked one carries its breakpoint on the last of them. */
const markedWireOf = (message: Prompt.Message) =>
  Effect.map(wireOf(message), (wires): Array<WireMessage> => {
    const mark = cacheControlOf(message)
    if (mark === undefined || wires.length === 0) return wires
    return [...wires.slice(0, -1), withMark(wires[wires.length - 1]!, mark)]
  })

const comma = utf8.encode(",")

/** How many messages `content` begins with of the last body's: all of them, or none. */
const sharedPrefix = (content: ReadonlyArray<Prompt.Message>, last: PreviousMessages | undefined): number => {
  if (last === undefined || last.content.length > content.length) return 0
  for (let i = 0; i < last.content.length; i++) if (content[i] !== last.content[i]) return 0
  return last.content.length
}

/**
 * Chat Completions `messages` of @effect/ai's Prompt: the UTF-8 JSON of the array's members (without its brackets),
 * in pieces to be laid end to end; the last body's messages, when the prompt begins with them, in one piece.
 */
const messagesPieces = (prompt: Prompt.Prompt, cache: WireCache) =>
  Effect.gen(function*() {
    const content = prompt.content
    const pieces: Array<Uint8Array> = []
    const from = sharedPrefix(content, cache.last)
    if (from > 0 && cache.last!.json.length > 0) pieces.push(cache.last!.json)
    for (let i = from; i < content.length; i++) {
      const message = content[i]!
      let bytes = cache.messages.get(message)
      if (bytes === undefined) {
        bytes = utf8.encode((yield* markedWireOf(message)).map((wire) => JSON.stringify(wire)).join(","))
        cache.messages.set(message, bytes)
      }
      if (bytes.length === 0) continue
      if (pieces.length > 0) pieces.push(comma)
      pieces.push(bytes)
    }
    return pieces
  })

/** Converts @effect/ai's Prompt to Chat Completions `messages`, as the JSON text of the array. */
export const toMessagesJson = (prompt: Prompt.Prompt, cache: WireCache = makeWireCache()) =>
  Effect.map(messagesPieces(prompt, cache), (pieces) => new TextDecoder().decode(concatBytes([open, ...pieces, close])))

const open = utf8.encode("[")
const close = utf8.encode("]")

const toolChoiceOf = (choice: LanguageModel.ToolChoice<string>): WireToolChoice => {
  if (typeof choice === "string") return choice
  if ("tool" in choice) return { type: "function", function: { name: choice.tool } }
  return choice.mode ?? "auto"
}

/** A function tool with its JSON Schema parameters; provider-defined tools have no Chat Completions form. */
const wireToolOf = (tool: Tool.Any) =>
  Effect.gen(function*() {
    if (!Tool.isUserDefined(tool)) {
      return yield* malformed(`the provider-defined tool ${tool.name} is not available over Chat Completions`)
    }
    const description = tool.description ?? Tool.getDescriptionFromSchemaAst(tool.parametersSchema.ast)
    const wire: WireTool = {
      type: "function",
      function: {
        name: tool.name,
        ...(description === undefined ? {} : { description }),
        parameters: Tool.getJsonSchemaFromSchemaAst(tool.parametersSchema.ast)
      }
    }
    return wire
  })

/**
 * The `tools` and `tool_choice` members of the body as JSON text without the braces ("" without tools). Each tool's
 * JSON is made once and joined after: the same tools go out every step, and their schemas are most of the members.
 */
export const toolsMembersJson = (options: LanguageModel.ProviderOptions, cache: WireCache = makeWireCache()) =>
  Effect.gen(function*() {
    if (options.tools.length === 0) return ""
    const pieces: Array<string> = []
    for (const tool of options.tools) {
      let json = cache.tools.get(tool)
      if (json === undefined) {
        json = JSON.stringify(yield* wireToolOf(tool))
        cache.tools.set(tool, json)
      }
      pieces.push(json)
    }
    return `"tools":[${pieces.join(",")}],"tool_choice":${JSON.stringify(toolChoiceOf(options.toolChoice))}`
  })

/** What a caller may add to the body after the members made here. */
export type RequestExtra = Omit<Partial<ChatRequest>, "model" | "messages" | "tools" | "tool_choice" | "response_format">

/**
 * The request body for one model round, as UTF-8 JSON: `model`, then `messages` copied together from the cache, then
 * the tools, the response format and `extra` (streaming options): the bytes of the text JSON.stringify gives for that
 * object.
 */
export const toRequestBody = (
  model: string,
  options: LanguageModel.ProviderOptions,
  cache: WireCache = makeWireCache(),
  extra: RequestExtra = {}
) =>
  Effect.gen(function*() {
    const messages = yield* messagesPieces(options.prompt, cache)
    const tools = yield* toolsMembersJson(options, cache)
    const format = options.responseFormat
    const rest = JSON.stringify({
      ...(format.type === "json"
        ? {
          response_format: {
            type: "json_schema",
            json_schema: {
              name: format.objectName,
              schema: Tool.getJsonSchemaFromSchemaAst(format.schema.ast),
              strict: true
            }
          }
        }
        : {}),
      ...extra
    } satisfies Partial<ChatRequest>)
    // `rest` is an object's JSON: its members follow the tools, its closing brace closes the body.
    const tail = rest === "{}" ? "}" : `,${rest.slice(1)}`
    const head = utf8.encode(`{"model":${JSON.stringify(model)},"messages":[`)
    const body = concatBytes([head, ...messages, utf8.encode(`]${tools === "" ? "" : `,${tools}`}${tail}`)])
    // The messages' JSON stays where it is in the body (never written to again), for the next step to copy.
    const json = body.subarray(head.length, head.length + messages.reduce((length, piece) => length + piece.length, 0))
    // A copy of the list: a caller's array changed in place later must not pass for the messages sent now.
    cache.last = { content: options.prompt.content.slice(), json }
    return body
  })
