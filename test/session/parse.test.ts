import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import * as fc from "fast-check"
// Node's deepStrictEqual compares prototypes too: a line must be an instance of its class, as the schema makes it.
import * as NodeAssert from "node:assert/strict"
import { decodeSessionLine, decodeSessionLineBySchema, parseSessionLines, sessionLineMaxDepth } from "../../src/session/lineDecode.js"
import { AssistantMessage, Envelope, SessionHeader, type SessionMessage, ToolResultMessage, UserMessage } from "../../src/session/messages.js"
import { type ParsedSession, pairToolResults, SessionParser } from "../../src/session/parse.js"
import { lineOf } from "../../src/session/SessionStore.js"

// Text with multi-byte characters, so byte offsets and character offsets differ.
const text = fc.string({ unit: "binary", maxLength: 40 })
const id = fc.constantFrom("call_1", "call_2", "c3")
const at = fc.constantFrom("2026-11-22T10:00:00.000Z", "t")
const json = fc.jsonValue({ maxDepth: 2 })

const envelope = fc.record({ interface: text, channel: text, userId: text, time: text }).map((e) => new Envelope(e))
const user = fc.record({ text, at, envelope: fc.option(envelope, { nil: undefined }) }).map(({ envelope, ...rest }) =>
  new UserMessage(envelope === undefined ? rest : { ...rest, envelope })
)
const usage = fc.record({
  inputTokens: fc.nat(),
  outputTokens: fc.nat(),
  cachedInputTokens: fc.nat(),
  cacheWriteTokens: fc.nat(),
  costUsdCents: fc.double({ noNaN: true, noDefaultInfinity: true })
})
const assistant = fc.record({
  text,
  at,
  toolCalls: fc.array(fc.record({ id, name: fc.constantFrom("read", "glob"), params: json }), { maxLength: 3 }),
  usage: fc.option(usage, { nil: undefined })
}).map(({ usage, ...rest }) => new AssistantMessage(usage === undefined ? rest : { ...rest, usage }))
const tool = fc.record({ toolCallId: id, toolName: fc.constantFrom("read", "glob"), isError: fc.boolean(), result: json, at })
  .map((r) => new ToolResultMessage(r))
const message: fc.Arbitrary<SessionMessage> = fc.oneof(user, assistant, tool)

const header = lineOf(new SessionHeader({ version: 1, id: "s", createdAt: "2026-11-22T10:00:00.000Z", agent: "a" }))

/** Lines kern did not write as they are: other shapes, wrong types, fields a newer kern added, garbage. */
const oddLine = fc.oneof(
  fc.constantFrom(
    "{\"_tag\":\"user\",\"text\":5,\"at\":\"t\"}",
    "{\"_tag\":\"user\",\"text\":\"x\",\"at\":\"t\",\"envelope\":null}",
    "{\"_tag\":\"user\",\"text\":\"x\",\"at\":\"t\",\"mood\":\"new field\"}",
    "{\"_tag\":\"assistant\",\"text\":\"x\",\"at\":\"t\",\"toolCalls\":[{\"id\":\"c\",\"name\":\"n\"}]}",
    "{\"_tag\":\"assistant\",\"text\":\"x\",\"at\":\"t\",\"usage\":{\"inputTokens\":1,\"outputTokens\":\"2\"}}",
    "{\"_tag\":\"assistant\",\"text\":\"x\",\"at\":\"t\",\"usage\":{\"inputTokens\":1,\"outputTokens\":2}}",
    "{\"_tag\":\"tool\",\"toolCallId\":\"c\",\"toolName\":\"n\",\"isError\":\"no\",\"result\":1,\"at\":\"t\"}",
    "{\"_tag\":\"tool\",\"toolCallId\":\"c\",\"toolName\":\"n\",\"isError\":false,\"at\":\"t\"}",
    // The fast path takes a parsed object as the instance only when it holds exactly the fields checked.
    "{\"_tag\":\"user\",\"text\":\"x\",\"at\":\"t\",\"__proto__\":{\"a\":1}}",
    "{\"_tag\":\"user\",\"text\":\"x\",\"at\":\"t\",\"inboxId\":3}",
    "{\"_tag\":\"user\",\"text\":\"x\",\"at\":\"t\",\"envelope\":{\"interface\":\"i\",\"channel\":\"c\",\"userId\":\"u\",\"time\":\"t\",\"more\":1}}",
    "{\"_tag\":\"user\",\"text\":\"x\",\"at\":\"t\",\"envelope\":{\"interface\":\"i\",\"channel\":\"c\",\"userId\":\"u\",\"time\":\"t\",\"turn\":\"t1\"}}",
    "{\"_tag\":\"user\",\"text\":\"x\",\"at\":\"t\",\"envelope\":{\"interface\":\"i\",\"channel\":\"c\",\"userId\":\"u\",\"time\":\"t\",\"turn\":5}}",
    "{\"_tag\":\"assistant\",\"text\":\"x\",\"at\":\"t\"}",
    "{\"_tag\":\"assistant\",\"text\":\"x\",\"at\":\"t\",\"toolCalls\":[{\"id\":\"c\",\"name\":\"n\",\"params\":{},\"more\":1}]}",
    "{\"_tag\":\"assistant\",\"text\":\"x\",\"at\":\"t\",\"usage\":{\"inputTokens\":1,\"outputTokens\":2,\"cachedInputTokens\":0,\"cacheWriteTokens\":0,\"costUsdCents\":0,\"more\":1}}",
    "{\"_tag\":\"assistant\",\"text\":\"x\",\"at\":\"t\",\"toolCalls\":[],\"usage\":{\"inputTokens\":1,\"outputTokens\":2,\"cachedInputTokens\":0,\"cacheWriteTokens\":0,\"costUsdCents\":0},\"more\":1}",
    "{\"_tag\":\"tool\",\"toolCallId\":\"c\",\"toolName\":\"n\",\"isError\":false,\"result\":1,\"at\":\"t\",\"more\":1}",
    "{\"_tag\":\"segment\",\"from\":1,\"to\":9}",
    "{\"_tag\":\"session\",\"version\":2,\"id\":\"s\",\"createdAt\":\"t\",\"agent\":\"a\"}",
    "[1,2,3]",
    "null",
    "",
    "   "
  ),
  text.map((garbage) => garbage.replace(/\n/g, " ")),
  message.map((m) => {
    const encoded = lineOf(m).trimEnd()
    return encoded.replace("\"at\":", "\"at\":1,\"was\":")
  })
)

type Json = null | boolean | number | string | Array<Json> | { [key: string]: Json }

/** Every place in a JSON value that holds a value: [container, key]. */
const places = (value: Json, out: Array<[Record<string, Json> | Array<Json>, string | number]> = []) => {
  if (Array.isArray(value)) value.forEach((item, i) => (out.push([value, i]), places(item, out)))
  else if (value !== null && typeof value === "object") {
    for (const key of Object.keys(value)) {
      out.push([value, key])
      places(value[key]!, out)
    }
  }
  return out
}

/** One of kern's lines with one value anywhere in it replaced by another JSON value, or removed. */
const mutated = fc.tuple(message, fc.nat(), fc.option(fc.jsonValue({ maxDepth: 1 }) as fc.Arbitrary<Json>, { nil: undefined }))
  .map(([m, pick, replacement]) => {
    const value = JSON.parse(lineOf(m)) as Json
    const all = places(value)
    const [container, key] = all[pick % all.length]!
    if (replacement === undefined && !Array.isArray(container)) delete container[key as string]
    else (container as Record<string | number, Json>)[key] = replacement ?? null
    return JSON.stringify(value)
  })

const line = fc.oneof(
  { weight: 4, arbitrary: message.map((m) => lineOf(m).trimEnd()) },
  { weight: 1, arbitrary: oddLine },
  { weight: 1, arbitrary: mutated }
)

/** The end of a file: nothing more, a whole line without its newline, or a write cut short anywhere. */
const tail = fc.oneof(
  fc.constant(""),
  line,
  fc.tuple(message, fc.double({ min: 0, max: 1, noNaN: true })).map(([m, cut]) => {
    const bytes = Buffer.from(lineOf(m).trimEnd(), "utf8")
    return bytes.subarray(0, Math.floor(cut * (bytes.length - 1))).toString("latin1")
  }).map((s) => ({ latin1: s }))
)

const session = (maxLines: number) =>
  fc.record({
    withHeader: fc.double({ min: 0, max: 1, noNaN: true }).map((x) => x > 0.05),
    lines: fc.array(line, { maxLength: maxLines }),
    tail,
    cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 })
  }).map(({ cuts, lines, tail, withHeader }) => {
    const head = Buffer.from((withHeader ? header : "") + lines.map((l) => `${l}\n`).join(""), "utf8")
    const end = typeof tail === "string" ? Buffer.from(tail, "utf8") : Buffer.from(tail.latin1, "latin1")
    const bytes = Buffer.concat([head, end])
    return { bytes, cuts: cuts.map((c) => Math.floor(c * bytes.length)).sort((a, b) => a - b) }
  })

/** The reference: split on newlines, count each line's bytes on its own, decode each with the schema alone. */
const lineByLine = (bytes: Buffer, name: string): Either.Either<ParsedSession, string> => {
  const parts = bytes.toString("utf8").split("\n")
  const problems: Array<string> = []
  const accepted: Array<SessionHeader | SessionMessage> = []
  let offset = 0
  let validBytes = 0
  let missingNewline = false
  parts.forEach((raw, index) => {
    const complete = index < parts.length - 1
    const size = Buffer.byteLength(raw) + (complete ? 1 : 0)
    offset += size
    const number = index + 1
    if (raw.trim() === "") {
      if (complete) validBytes = offset
      return
    }
    const decoded = decodeSessionLineBySchema(raw)
    if (complete) {
      if (decoded._tag === "Line") accepted.push(decoded.line)
      else problems.push(`${name}: line ${number} could not be read and was skipped`)
      validBytes = offset
    } else if (decoded._tag === "NotJson") {
      problems.push(`${name}: dropped a torn last line (${size} bytes of an unfinished write)`)
    } else {
      if (decoded._tag === "Line") accepted.push(decoded.line)
      else problems.push(`${name}: line ${number} is not a line this kern knows (written by a newer kern?); kept in the file and skipped`)
      validBytes = offset
      missingNewline = true
    }
  })
  const [first] = accepted
  if (!(first instanceof SessionHeader)) return Either.left(`${name} is not a kern session (no session header on its first line)`)
  const messages = accepted.filter((l): l is SessionMessage => !(l instanceof SessionHeader))
  const { ordered, synthesized } = pairToolResults(messages)
  if (synthesized.length > 0) problems.push(`${name}: ${synthesized.length} tool call(s) never finished; recorded as interrupted`)
  return Either.right({
    header: first,
    messages: ordered,
    synthesized,
    messageLines: messages.length,
    validBytes,
    tornBytes: bytes.length - validBytes,
    missingNewline,
    problems,
    firstIndex: 0,
    // The positions have tests of their own; the comparison leaves them out.
    positions: new Map()
  })
}

const streamed = (bytes: Buffer, cuts: ReadonlyArray<number>, name: string) => {
  const parser = new SessionParser(name)
  let start = 0
  for (const cut of [...cuts, bytes.length]) {
    parser.feed(bytes.subarray(start, cut))
    start = cut
  }
  return Either.mapLeft(parser.finish(), (notASession) => notASession.message)
}

const agree = ({ bytes, cuts }: { readonly bytes: Buffer; readonly cuts: ReadonlyArray<number> }) => {
  const expected = lineByLine(bytes, "s.jsonl")
  const actual = Either.map(streamed(bytes, cuts, "s.jsonl"), (parsed) => ({ ...parsed, positions: new Map() }))
  NodeAssert.deepStrictEqual(actual, expected)
}

describe("SessionParser", () => {
  it("reads any mix of valid, odd, garbage and torn lines, in any chunks, as line-by-line parsing does", () => {
    fc.assert(fc.property(session(60), agree), { numRuns: 300 })
  })

  it("agrees with line-by-line parsing on sessions of 20,000 lines, offsets for repair included", () => {
    fc.assert(fc.property(session(20_000).filter(({ bytes }) => bytes.length > 0), agree), { numRuns: 3 })
    // fast-check's arrays stay short; one session at full size, in 64 KiB chunks.
    const lines = fc.sample(line, { numRuns: 20_000, seed: 7 })
    const bytes = Buffer.from(header + lines.map((l) => `${l}\n`).join("") + "{\"_tag\":\"user\",\"te", "utf8")
    const cuts = Array.from({ length: Math.floor(bytes.length / 65_536) }, (_, i) => (i + 1) * 65_536)
    agree({ bytes, cuts })
    const parsed = Either.getOrThrow(streamed(bytes, cuts, "s.jsonl"))
    assert.isAbove(parsed.messageLines, 10_000)
    assert.strictEqual(parsed.tornBytes, Buffer.byteLength("{\"_tag\":\"user\",\"te"))
  })

  it("parses a chunk's lines in one call only when that is what parsing each gives: merged, split, blank and deep lines", () => {
    const user = lineOf(new UserMessage({ text: "x", at: "t" })).trimEnd()
    // Lines that are not JSON alone but would be inside one array: halves of one value, two values on one line.
    const hostile = [
      ["{\"_tag\":\"user\",\"text\":\"x\"", "\"at\":\"t\"}"],
      ["[1", "2]"],
      ["1,2"],
      ["{\"_tag\":\"user\",\"text\":\"x\",\"at\":\"t\"},{\"_tag\":\"user\",\"text\":\"y\",\"at\":\"t\"}"],
      ["", user],
      ["  ", user],
      [`{"_tag":"user","at":"t","text":"x","n":${"[".repeat(150)}`, `${"]".repeat(150)}}`],
      [`{"_tag":"tool","toolCallId":"c","toolName":"read","isError":false,"at":"t","result":"${"[".repeat(300)}"}`],
      [`{"_tag":"tool","toolCallId":"c","toolName":"read","isError":false,"at":"t","result":${"[".repeat(199)}${"]".repeat(199)}}`],
      // A line of two values and two lines of one value's halves: as many elements as lines, none of them a line's.
      ["1,2", "[3", "4]"],
      [`${user},${user}`, `{"_tag":"user","text":"x","at":"t","n":[0`, "1]}"],
      // The same, the halves nested past the limit together (each alone within it).
      [`${user},${user}`, `{"_tag":"user","text":"x","at":"t","n":${"[".repeat(150)}0`, `${"[".repeat(150)}1${"]".repeat(300)}}`],
      // A string cut by the line's end (after an escaped backslash, or not), made whole by the comma in its place.
      [`{"_tag":"user","at":"t","text":"x\\\\`, `y"}`, "1,2"],
      [`{"_tag":"user","at":"t","text":"x`, `y"}`, "1,2"]
    ]
    for (const lines of hostile) {
      const bytes = Buffer.from(`${header}${user}\n${lines.join("\n")}\n${user}\n`, "utf8")
      agree({ bytes, cuts: [] })
      agree({ bytes, cuts: [header.length] })
    }
    // One level past the limit (the object and 200 arrays): the chunk is read a line at a time, and that line is
    // skipped, saying why.
    const deep = `{"_tag":"tool","toolCallId":"c","toolName":"read","isError":false,"at":"t","result":${"[".repeat(200)}${"]".repeat(200)}}`
    const parsed = Either.getOrThrow(streamed(Buffer.from(`${header}${user}\n${deep}\n${user}\n`, "utf8"), [], "s.jsonl"))
    assert.strictEqual(parsed.messages.length, 2)
    assert.match(parsed.problems[0] ?? "", /line 3 could not be read \(nested more than 200 levels deep/)
  })

  it("finds a chunk's lines as the byte-at-a-time scan does: strings crossed whole, escaped quotes and backslashes", () => {
    // The scan parseSessionLines had before it crossed strings with indexOf: a byte at a time.
    const byBytes = (bytes: Buffer, max: number): Array<number> | undefined => {
      const ends: Array<number> = []
      let depth = 0
      let inString = false
      for (let i = 0; i < bytes.length; i++) {
        const byte = bytes[i]!
        if (inString) {
          if (byte === 0x0a || (byte === 0x5c && bytes[++i] === 0x0a)) return undefined
          if (byte === 0x22) inString = false
        } else if (byte === 0x22) inString = true
        else if (byte === 0x7b || byte === 0x5b) {
          if (++depth > max) return undefined
        } else if (byte === 0x7d || byte === 0x5d) {
          if (--depth < 0) return undefined
        } else if (byte === 0x2c) {
          if (depth === 0) return undefined
        } else if (byte === 0x0a) {
          if (depth !== 0) return undefined
          ends.push(i)
        }
      }
      return inString || depth !== 0 ? undefined : ends
    }
    const reference = (bytes: Buffer) => {
      const ends = byBytes(bytes, sessionLineMaxDepth)
      if (ends === undefined || ends.length === 0) return undefined
      try {
        const values: unknown = JSON.parse(`[${bytes.toString("latin1").slice(0, -1).replaceAll("\n", ",")}]`)
        return Array.isArray(values) && values.length === ends.length ? { ends, values } : undefined
      } catch {
        return undefined
      }
    }
    // Pieces that open, close and escape strings and brackets, so lines are cut, merged and torn in every way.
    const piece = fc.constantFrom("{", "}", "[", "]", ",", ":", "\"", "\\", "\\\"", "\\\\", "\n", "1", "a", " ", "\"a\":", "{\"s\":\"")
    const ascii = fc.string({ unit: "grapheme-ascii", maxLength: 12 })
    const value = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)).filter((t) => /^[\x00-\x7f]*$/.test(t))
    const chunk = fc.array(
      fc.oneof(value, value, fc.array(piece, { maxLength: 12 }).map((p) => p.join("")), ascii.map((t) => JSON.stringify({ t }))),
      { minLength: 1, maxLength: 8 }
    ).map((lines) => Buffer.from(`${lines.join("\n")}\n`, "latin1"))
    fc.assert(fc.property(chunk, (bytes) => {
      NodeAssert.deepStrictEqual(parseSessionLines(bytes), reference(bytes))
    }), { numRuns: 3000 })
    // kern's own lines, with quotes and backslashes in their strings, are parsed in one call.
    const lines = [`{"_tag":"user","text":"a \\"quoted\\" \\\\ path\\\\","at":"t"}`, lineOf(new UserMessage({ text: "x\\\"y\\", at: "t" })).trimEnd()]
    const bytes = Buffer.from(`${lines.join("\n")}\n`, "latin1")
    assert.deepStrictEqual(parseSessionLines(bytes)?.ends, [lines[0]!.length, lines[0]!.length + 1 + lines[1]!.length])
  })

  it("pairs tool results with their calls as the plain search does, results in order or not", () => {
    // The search alone: each call takes the first untaken result of its step with its id.
    const reference = (messages: ReadonlyArray<SessionMessage>) => {
      const ordered: Array<SessionMessage> = []
      let i = 0
      while (i < messages.length) {
        const message = messages[i++]!
        ordered.push(message)
        if (message._tag !== "assistant" || message.toolCalls.length === 0) continue
        const results: Array<ToolResultMessage> = []
        while (i < messages.length && messages[i]!._tag === "tool") results.push(messages[i++] as ToolResultMessage)
        const taken = results.map(() => false)
        for (const call of message.toolCalls) {
          const index = results.findIndex((result, k) => !taken[k] && result.toolCallId === call.id)
          if (index === -1) ordered.push(new ToolResultMessage({ toolCallId: call.id, toolName: call.name, isError: true, result: "interrupted", at: message.at }))
          else {
            taken[index] = true
            ordered.push(results[index]!)
          }
        }
        results.forEach((result, k) => taken[k] ? undefined : ordered.push(result))
      }
      return ordered.map((m) => m._tag === "tool" ? `${m.toolCallId}:${m.result === "interrupted" ? "i" : String(m.result)}` : m._tag)
    }
    const shown = (messages: ReadonlyArray<SessionMessage>) =>
      messages.map((m) => m._tag === "tool" ? `${m.toolCallId}:${m.isError && m.toolName !== "r" ? "i" : String(m.result)}` : m._tag)
    const call = fc.record({ id, name: fc.constant("read"), params: fc.constant({}) })
    const step = fc.oneof(
      fc.constant<Array<SessionMessage>>([new UserMessage({ text: "q", at: "t" })]),
      fc.tuple(fc.array(call, { maxLength: 4 }), fc.array(fc.tuple(id, fc.nat(99)), { maxLength: 5 })).map(([calls, results]) => [
        new AssistantMessage({ text: "", toolCalls: calls, at: "t" }) as SessionMessage,
        ...results.map(([callId, n]) => new ToolResultMessage({ toolCallId: callId, toolName: "r", isError: false, result: n, at: "t" }))
      ]),
      // A step answered in order, the common case.
      fc.array(call, { minLength: 1, maxLength: 4 }).map((calls) => [
        new AssistantMessage({ text: "", toolCalls: calls, at: "t" }) as SessionMessage,
        ...calls.map((c, n) => new ToolResultMessage({ toolCallId: c.id, toolName: "r", isError: false, result: n, at: "t" }))
      ])
    )
    fc.assert(
      fc.property(fc.array(step, { maxLength: 8 }), (steps) => {
        const messages = steps.flat()
        assert.deepStrictEqual(shown(pairToolResults(messages).ordered), reference(messages))
      }),
      { numRuns: 1000 }
    )
  })

  it("decodes kern's own lines by the fast path exactly as the schema does, and odd ones the same way too", () => {
    fc.assert(
      fc.property(line, (raw) => {
        const fast = decodeSessionLine(raw)
        const slow = decodeSessionLineBySchema(raw)
        NodeAssert.deepStrictEqual(fast, slow)
      }),
      { numRuns: 2000 }
    )
  })

  it("refuses a tag that is not a string instead of throwing (effect's union decoder calls String() on it)", () => {
    for (const tag of ["{\"toString\":null}", "{\"valueOf\":1,\"toString\":{}}", "[{\"toString\":null}]", "{}", "[]", "1", "null"]) {
      const raw = `{"text":"","at":"2026-11-22T10:00:00.000Z","_tag":${tag}}`
      assert.strictEqual(decodeSessionLine(raw)._tag, "Undecodable", raw)
      assert.strictEqual(decodeSessionLineBySchema(raw)._tag, "Undecodable", raw)
    }
  })

  it("keeps a complete last line it cannot decode, and cuts only an unfinished write", () => {
    const newer = "{\"_tag\":\"segment\",\"from\":1,\"to\":9}"
    const kept = Either.getOrThrow(streamed(Buffer.from(header + newer), [], "s.jsonl"))
    assert.strictEqual(kept.tornBytes, 0)
    assert.isTrue(kept.missingNewline)
    assert.match(kept.problems[0] ?? "", /line 2 is not a line this kern knows/)
    const torn = Either.getOrThrow(streamed(Buffer.from(header + newer.slice(0, 20)), [], "s.jsonl"))
    assert.strictEqual(torn.tornBytes, 20)
    assert.match(torn.problems[0] ?? "", /dropped a torn last line \(20 bytes/)
  })

  it("skips a line nested too deep with a warning naming the depth, in the middle or last, and reads the rest", () => {
    const good = lineOf(new UserMessage({ text: "[[[[ brackets in text are text", at: "t" }))
    const deepLines = [
      `{"_tag":"tool","toolCallId":"c","toolName":"read","isError":false,"at":"t","result":${"[".repeat(3000)}1${"]".repeat(3000)}}`,
      `{"_tag":"user","at":"t","text":${"{\"a\":".repeat(100_000)}1${"}".repeat(100_000)}}`,
      "[".repeat(3000)
    ]
    for (const deep of deepLines) {
      const middle = Either.getOrThrow(streamed(Buffer.from(`${header}${good}${deep}\n${good}`), [], "s.jsonl"))
      assert.strictEqual(middle.messages.length, 2)
      assert.match(middle.problems[0] ?? "", /line 3 could not be read \(nested more than 200 levels deep \(at character \d+\)\) and was skipped/)
      const last = Either.getOrThrow(streamed(Buffer.from(`${header}${good}${deep}`), [], "s.jsonl"))
      assert.strictEqual(last.messages.length, 1)
      assert.strictEqual(last.tornBytes, 0)
      assert.match(last.problems[0] ?? "", /line 3 could not be read \(nested more than 200 levels deep .*kept in the file and skipped/)
    }
  })

  it("says whether a file without a header is empty or holds lines", () => {
    const finish = (text: string) => {
      const parser = new SessionParser("s.jsonl")
      parser.feed(Buffer.from(text))
      return parser.finish()
    }
    assert.deepStrictEqual(Either.getLeft(finish("")).pipe((l) => l._tag === "Some" && l.value.empty), true)
    assert.deepStrictEqual(Either.getLeft(finish("\n\n{\"_tag\":\"us")).pipe((l) => l._tag === "Some" && l.value.empty), true)
    assert.deepStrictEqual(Either.getLeft(finish("{\"_tag\":\"user\",\"text\":\"x\",\"at\":\"t\"}\n")).pipe((l) => l._tag === "Some" && l.value.empty), false)
  })
})
