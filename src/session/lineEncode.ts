import { Schema } from "effect"
import { AssistantMessage, Envelope, type SessionLine, SessionLine as SessionLineSchema, ToolResultMessage, type Usage, UserMessage } from "./messages.js"

/**
 * One session line as the JSON text kern appends. Every message of a turn is appended as it happens, and encoding
 * through the SessionLine schema walks the union and each field for what is a plain object of strings and numbers.
 * So the messages kern itself builds are written here by hand, with the schema's members in the schema's order;
 * anything else (the header, a field of an unexpected type) goes through the schema, which stays the one authority
 * and throws for a line that is not one. A property test holds the two paths to the same text.
 */
const encodeSlow = Schema.encodeSync(Schema.parseJson(SessionLineSchema))

const isString = (u: unknown): u is string => typeof u === "string"
const isNumber = (u: unknown): u is number => typeof u === "number"

const envelopeOf = (envelope: Envelope) =>
  envelope instanceof Envelope && isString(envelope.interface) && isString(envelope.channel) &&
    isString(envelope.userId) && isString(envelope.time) && (envelope.turn === undefined || isString(envelope.turn))
    ? {
      interface: envelope.interface,
      channel: envelope.channel,
      userId: envelope.userId,
      time: envelope.time,
      ...(envelope.turn === undefined ? {} : { turn: envelope.turn })
    }
    : undefined

const usageOf = (usage: Usage) =>
  typeof usage === "object" && usage !== null && isNumber(usage.inputTokens) && isNumber(usage.outputTokens) &&
    isNumber(usage.cachedInputTokens) && isNumber(usage.cacheWriteTokens) && isNumber(usage.costUsdCents)
    ? {
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      cachedInputTokens: usage.cachedInputTokens,
      cacheWriteTokens: usage.cacheWriteTokens,
      costUsdCents: usage.costUsdCents
    }
    : undefined

const toolCallsOf = (calls: AssistantMessage["toolCalls"]) => {
  if (!Array.isArray(calls)) return undefined
  const out: Array<{ id: string; name: string; params: unknown }> = []
  for (const call of calls) {
    if (typeof call !== "object" || call === null || !isString(call.id) || !isString(call.name)) return undefined
    out.push({ id: call.id, name: call.name, params: call.params })
  }
  return out
}

/** The encoded form of a message kern built, or undefined when the schema must judge it. */
const encodeFast = (line: SessionLine): object | undefined => {
  if (line instanceof UserMessage) {
    if (!isString(line.text) || !isString(line.at) || line.attachments !== undefined) return undefined
    if (line.inboxId !== undefined && !isNumber(line.inboxId)) return undefined
    const inboxId = line.inboxId === undefined ? {} : { inboxId: line.inboxId }
    if (line.envelope === undefined) return { text: line.text, ...inboxId, at: line.at, _tag: "user" }
    const envelope = envelopeOf(line.envelope)
    return envelope === undefined ? undefined : { text: line.text, envelope, ...inboxId, at: line.at, _tag: "user" }
  }
  if (line instanceof AssistantMessage) {
    if (!isString(line.text) || !isString(line.at)) return undefined
    const toolCalls = toolCallsOf(line.toolCalls)
    if (toolCalls === undefined) return undefined
    if (line.usage === undefined) return { text: line.text, toolCalls, at: line.at, _tag: "assistant" }
    const usage = usageOf(line.usage)
    return usage === undefined ? undefined : { text: line.text, toolCalls, usage, at: line.at, _tag: "assistant" }
  }
  if (line instanceof ToolResultMessage) {
    if (!isString(line.toolCallId) || !isString(line.toolName) || typeof line.isError !== "boolean" || !isString(line.at)) {
      return undefined
    }
    return {
      toolCallId: line.toolCallId,
      toolName: line.toolName,
      isError: line.isError,
      result: line.result,
      at: line.at,
      _tag: "tool"
    }
  }
  return undefined
}

/** The line's JSON, without the newline: by hand for the messages kern builds, else by the schema. */
export const encodeSessionLine = (line: SessionLine): string => {
  const fast = encodeFast(line)
  return fast === undefined ? encodeSlow(line) : JSON.stringify(fast)
}

/** The same through the schema alone: the reference the fast path is tested against. */
export const encodeSessionLineBySchema = (line: SessionLine): string => encodeSlow(line)
