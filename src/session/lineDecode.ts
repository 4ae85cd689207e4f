import { Either, ParseResult, Schema } from "effect"
import { type JsonTextError, maxJsonDepth, parseJsonBounded } from "../config/json.js"
import {
  AssistantMessage,
  Envelope,
  SessionHeader,
  SessionLine,
  type ToolCall,
  ToolResultMessage,
  type Usage,
  UserMessage
} from "./messages.js"

/**
 * One line of a session file, decoded. A session is read at every start and can hold hundreds of thousands of
 * lines: decoding each through Schema costs 8–10× the JSON.parse under it. So the shapes kern itself writes are
 * checked by hand here and built without a second validation; anything else (an older or newer field, a wrong type)
 * goes through the SessionLine schema, which stays the one authority on what a line may be. A property test holds
 * the two paths to the same answers.
 */
export type DecodedLine =
  | { readonly _tag: "Line"; readonly line: SessionLine }
  /** Complete JSON that is not a line this kern knows (an unknown tag from a newer kern, a wrong field). */
  | { readonly _tag: "Undecodable"; readonly reason: string }
  /** Not JSON at all: garbage, or a write cut short. */
  | { readonly _tag: "NotJson" }
  /** Nested deeper than `sessionLineMaxDepth` (a hand-edited or hostile file): never parsed, kept and skipped. */
  | { readonly _tag: "TooDeep"; readonly reason: string }

const decodeSchema = Schema.decodeUnknownEither(SessionLine)

/**
 * The schema's decode, as a DecodedLine: for a value `decodeKnownValue` did not take (which leaves it as it was).
 * effect's union decoder calls `String()` on the `_tag` it dispatches on, which throws for JSON such as
 * `{"_tag":{"toString":null}}`: a tag that is not a string is refused before it gets there.
 */
export const decodeSlow = (value: unknown): DecodedLine => {
  if (isObject(value) && has(value, "_tag") && typeof value["_tag"] !== "string") {
    return { _tag: "Undecodable", reason: "_tag is not a string" }
  }
  const slow = decodeSchema(value)
  return Either.isRight(slow)
    ? { _tag: "Line", line: slow.right }
    : { _tag: "Undecodable", reason: ParseResult.TreeFormatter.formatErrorSync(slow.left) }
}

/**
 * An instance of a Schema class from props checked here. The class constructor copies its props, deletes and re-adds
 * the tag and walks every field for defaults: ~3 µs a line even unvalidated, as much as the JSON.parse. An instance
 * is only its fields on the class's prototype, which is what this builds; the property test in parse.test.ts holds
 * the result to the schema's own decode, prototype included.
 */
const instance = <A extends object>(prototype: A, props: { readonly [K in keyof A]?: A[K] }): A => {
  const target: A = Object.create(prototype)
  return Object.assign(target, props)
}

/**
 * The parsed object itself made the instance, when it holds exactly the fields checked (`keys` of them): copying
 * it into a new one doubled what a load allocates, and the collector's work with it (a fifth of a long session's
 * load). An object with any other key (a newer kern's field, `__proto__`) is copied instead, which drops it as the
 * schema does.
 */
const adopt = <A extends object>(prototype: A, o: Json, keys: number, props: () => { readonly [K in keyof A]?: A[K] }): A =>
  keyCount(o) === keys ? Object.setPrototypeOf(o, prototype) as A : instance(prototype, props())

type Json = Record<string, unknown>

/**
 * `o` with `key` set to `value`: nothing to do when it holds that value already (the parsed value was taken as it
 * is), which a cold load would otherwise pay an object and a copy for on every line.
 */
const withField = (o: Json, key: "envelope" | "toolCalls" | "usage", value: unknown): Json => {
  if (o[key] !== value) o[key] = value
  return o
}

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)
const has = (o: Json, key: string) => Object.prototype.hasOwnProperty.call(o, key)
/** Own enumerable keys, counted without making their array (a parsed object has no inherited ones). */
const keyCount = (o: Json): number => {
  let count = 0
  for (const _ in o) count++
  return count
}
const str = (o: Json, key: string): string | undefined => {
  const value = o[key]
  return typeof value === "string" ? value : undefined
}
const optionalNumber = (o: Json, key: string): number | undefined | false => {
  if (!has(o, key)) return undefined
  const value = o[key]
  return typeof value === "number" ? value : false
}

const envelopeOf = (value: unknown): Envelope | undefined => {
  if (!isObject(value)) return undefined
  const iface = str(value, "interface")
  const channel = str(value, "channel")
  const userId = str(value, "userId")
  const time = str(value, "time")
  if (iface === undefined || channel === undefined || userId === undefined || time === undefined) return undefined
  const turn = str(value, "turn")
  if (turn === undefined && has(value, "turn")) return undefined
  return adopt(Envelope.prototype, value, turn === undefined ? 4 : 5, () =>
    turn === undefined ? { interface: iface, channel, userId, time } : { interface: iface, channel, userId, time, turn })
}

const usageOf = (value: unknown): Usage | undefined => {
  if (!isObject(value)) return undefined
  const inputTokens = value["inputTokens"]
  const outputTokens = value["outputTokens"]
  const cached = optionalNumber(value, "cachedInputTokens")
  const writes = optionalNumber(value, "cacheWriteTokens")
  const cost = optionalNumber(value, "costUsdCents")
  if (
    typeof inputTokens !== "number" || typeof outputTokens !== "number" || cached === false || writes === false ||
    cost === false
  ) {
    return undefined
  }
  // All five there and nothing else: the parsed object is the value (the schema's defaults add nothing to it).
  if (cached !== undefined && writes !== undefined && cost !== undefined && keyCount(value) === 5) return value as Usage
  return {
    inputTokens,
    outputTokens,
    cachedInputTokens: cached ?? 0,
    cacheWriteTokens: writes ?? 0,
    costUsdCents: cost ?? 0
  }
}

const toolCallsOf = (value: unknown): Array<ToolCall> | undefined => {
  if (!Array.isArray(value)) return undefined
  // The parsed array is the value while every call holds only its three fields; a call with more is copied without.
  let exact = true
  for (const call of value) {
    if (!isObject(call) || !has(call, "params") || str(call, "id") === undefined || str(call, "name") === undefined) {
      return undefined
    }
    if (keyCount(call) !== 3) exact = false
  }
  if (exact) return value as Array<ToolCall>
  return value.map((call: Json) => ({ id: call["id"] as string, name: call["name"] as string, params: call["params"] }))
}

/** The known shapes, or undefined when the line needs the schema's judgement. */
const decodeFast = (o: Json): SessionLine | undefined => {
  const at = str(o, "at")
  switch (o["_tag"]) {
    case "user": {
      const text = str(o, "text")
      if (text === undefined || at === undefined || has(o, "attachments")) return undefined
      const inboxId = optionalNumber(o, "inboxId")
      if (inboxId === false) return undefined
      const withId = inboxId === undefined ? {} : { inboxId }
      const keys = 3 + (inboxId === undefined ? 0 : 1)
      if (!has(o, "envelope")) return adopt(UserMessage.prototype, o, keys, () => ({ text, ...withId, at, _tag: "user" as const }))
      const envelope = envelopeOf(o["envelope"])
      return envelope === undefined
        ? undefined
        : adopt(UserMessage.prototype, withField(o, "envelope", envelope), keys + 1, () => ({ text, envelope, ...withId, at, _tag: "user" as const }))
    }
    case "assistant": {
      const text = str(o, "text")
      if (text === undefined || at === undefined) return undefined
      const toolCalls = has(o, "toolCalls") ? toolCallsOf(o["toolCalls"]) : []
      if (toolCalls === undefined) return undefined
      const tag = "assistant" as const
      // The decoded fields are set on the parsed object (a missing toolCalls is the schema's default, []), which then
      // holds text, at, _tag, toolCalls and the usage if any.
      if (!has(o, "usage")) return adopt(AssistantMessage.prototype, withField(o, "toolCalls", toolCalls), 4, () => ({ text, at, toolCalls, _tag: tag }))
      const usage = usageOf(o["usage"])
      return usage === undefined
        ? undefined
        : adopt(AssistantMessage.prototype, withField(withField(o, "toolCalls", toolCalls), "usage", usage), 5, () => ({ text, at, toolCalls, usage, _tag: tag }))
    }
    case "tool": {
      const toolCallId = str(o, "toolCallId")
      const toolName = str(o, "toolName")
      const isError = o["isError"]
      if (toolCallId === undefined || toolName === undefined || typeof isError !== "boolean" || at === undefined) {
        return undefined
      }
      if (!has(o, "result")) return undefined
      return adopt(ToolResultMessage.prototype, o, 6, () => ({ toolCallId, toolName, isError, result: o["result"], at, _tag: "tool" as const }))
    }
    case "session": {
      const id = str(o, "id")
      const createdAt = str(o, "createdAt")
      const agent = str(o, "agent")
      if (o["version"] !== 1 || id === undefined || createdAt === undefined || agent === undefined) return undefined
      return new SessionHeader({ version: 1, id, createdAt, agent }, true)
    }
    default:
      return undefined
  }
}

/**
 * The deepest line kern reads back: twice the limit on JSON from outside, since a line wraps a model's arguments
 * (at most `maxJsonDepth` deep) in a few levels of its own. Deeper, a line would overflow the walks after the parse.
 */
export const sessionLineMaxDepth = maxJsonDepth * 2

const parseJson = (raw: string): Either.Either<unknown, JsonTextError> =>
  parseJsonBounded(raw, { max: sessionLineMaxDepth })

/** Decodes one line's text (without its newline). */
export const decodeSessionLine = (raw: string): DecodedLine => {
  const json = parseJson(raw)
  if (Either.isLeft(json)) return json.left.reason === "depth" ? { _tag: "TooDeep", reason: json.left.message } : { _tag: "NotJson" }
  return decodeSessionValue(json.right)
}

/** Decodes the JSON value of one line: by hand when kern wrote its shape, by the schema otherwise. */
const decodeSessionValue = (value: unknown): DecodedLine => {
  const fast = decodeKnownValue(value)
  return fast !== undefined ? { _tag: "Line", line: fast } : decodeSlow(value)
}

/**
 * The line a parsed value is when it has one of the shapes kern writes, checked by hand; undefined when it needs the
 * schema's judgement (`decodeSlow`). What a load calls for each of its lines first.
 */
export const decodeKnownValue = (value: unknown): SessionLine | undefined => (isObject(value) ? decodeFast(value) : undefined)

/**
 * Where each line of `text` (whole lines of ASCII read as latin1, the last ending at its last character) ends, its
 * newline's offset; undefined unless every line is, as far as its brackets, strings and commas tell, one value on its
 * own: outside strings its brackets close on the line (never below the line's start, never more than `max` deep) and
 * no comma stands outside all of them, and no string is open at its end. Then `n` lines joined by commas are `n`
 * elements at most one per line, so a count of `n` is one per line: two halves of a value on two lines cannot make up
 * for a line `1,2`. A string is crossed with one `indexOf` to its closing quote (most of a session line is strings),
 * so the loop runs a few times per value, not once per byte: a cold process ran a byte at a time for most of the
 * scan before V8 had compiled the loop.
 */
const lineEndsOfValues = (text: string, max: number): Array<number> | undefined => {
  const ends: Array<number> = []
  const length = text.length
  let depth = 0
  // A string may not run past the end of its line: a newline ends no string (nor is it escaped).
  let newline = text.indexOf("\n")
  let i = 0
  while (i < length) {
    const char = text.charCodeAt(i)
    if (char === 0x22) {
      // The closing quote: the first one after an even run of backslashes (each pair an escaped backslash).
      let close = text.indexOf("\"", i + 1)
      for (;;) {
        if (close === -1) return undefined
        let slashes = 0
        while (text.charCodeAt(close - 1 - slashes) === 0x5c) slashes++
        if ((slashes & 1) === 0) break
        close = text.indexOf("\"", close + 1)
      }
      if (newline !== -1 && newline < close) return undefined
      i = close + 1
      continue
    }
    if (char === 0x7b || char === 0x5b) {
      if (++depth > max) return undefined
    } else if (char === 0x7d || char === 0x5d) {
      if (--depth < 0) return undefined
    } else if (char === 0x2c) {
      if (depth === 0) return undefined
    } else if (char === 0x0a) {
      if (depth !== 0) return undefined
      ends.push(i)
      newline = text.indexOf("\n", i + 1)
    }
    i++
  }
  return depth !== 0 ? undefined : ends
}

/**
 * The lines of `bytes` (whole lines of ASCII, the last ending in its last byte), each with its JSON value parsed in
 * one call as the elements of one array; undefined when that is not certain to be what parsing each line gives: when
 * any line is not JSON on its own (an empty or blank line, a torn or a merged one), or holds more opening brackets
 * than a line may nest deep. Parsing a line at a time costs a cold process a call, a string and a depth check per
 * line, several times the parse. The array has one element per line exactly when every line is one JSON value: `n`
 * lines joined by `n - 1` commas make `n` elements only if no comma fell inside a value (the halves of a value on two
 * lines make one element, a line `1,2` makes two), which `lineEndsOfValues` makes sure of before the count is
 * trusted: halves of a deep value on two lines, made whole by a line `1,2` elsewhere, would otherwise pass the count.
 * Each line's depth is checked before the parse, so no value deeper than a line may be is made for a walk to overflow
 * on; such a line is left to the line-at-a-time path, which says which line it is.
 */
export const parseSessionLines = (
  bytes: Buffer
): { readonly ends: ReadonlyArray<number>; readonly values: ReadonlyArray<unknown> } | undefined => {
  // ASCII: a character's offset in the text is its byte's in the chunk.
  const ends = lineEndsOfValues(bytes.toString("latin1"), sessionLineMaxDepth)
  if (ends === undefined || ends.length === 0) return undefined
  // `[`, the lines with a comma for each newline but the last, `]`: a string outside V8's heap once it is a
  // megabyte, and made with one copy.
  const array = Buffer.allocUnsafe(bytes.length + 1)
  array[0] = 0x5b
  bytes.copy(array, 1)
  for (const end of ends) array[end + 1] = 0x2c
  array[bytes.length] = 0x5d
  let values: unknown
  try {
    values = JSON.parse(array.toString("latin1"))
  } catch {
    return undefined
  }
  return Array.isArray(values) && values.length === ends.length ? { ends, values } : undefined
}

/** The schema's own decode of a line, for comparing the fast path against (tests, benches). */
export const decodeSessionLineBySchema = (raw: string): DecodedLine => {
  const json = parseJson(raw)
  return Either.isLeft(json)
    ? json.left.reason === "depth" ? { _tag: "TooDeep", reason: json.left.message } : { _tag: "NotJson" }
    : decodeSlow(json.right)
}
