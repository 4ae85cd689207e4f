import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { encodeSessionLine, encodeSessionLineBySchema } from "../../src/session/lineEncode.js"
import { AssistantMessage, Envelope, SessionHeader, type SessionLine, ToolResultMessage, UserMessage } from "../../src/session/messages.js"

const text = fc.string({ unit: "binary", maxLength: 30 })
const json = fc.jsonValue({ maxDepth: 2 })
// Values the schema path must judge: a fast path that wrote them as they are would write what no reader accepts.
const wrong = fc.constantFrom<unknown>(5, null, undefined, true, {}, [], "x")

const envelope = fc.record({ interface: text, channel: text, userId: text, time: text }).map((e) => new Envelope(e))
const user = fc.record({ text, at: text, envelope: fc.option(envelope, { nil: undefined }) }, { requiredKeys: ["text", "at"] })
  .map((props) => new UserMessage(props))
const usage = fc.record({
  inputTokens: fc.nat(),
  outputTokens: fc.nat(),
  cachedInputTokens: fc.nat(),
  cacheWriteTokens: fc.nat(),
  costUsdCents: fc.double({ noNaN: true, noDefaultInfinity: true })
})
const call = fc.record({ id: text, name: text, params: json })
const assistant = fc.record({
  text,
  at: text,
  toolCalls: fc.array(call, { maxLength: 3 }),
  usage: fc.option(usage, { nil: undefined })
}, { requiredKeys: ["text", "at"] }).map((props) => new AssistantMessage(props))
const tool = fc.record({ toolCallId: text, toolName: text, isError: fc.boolean(), result: fc.option(json, { nil: undefined }), at: text })
  .map((props) => new ToolResultMessage(props))
const header = fc.record({ id: text, createdAt: text, agent: text }).map((props) => new SessionHeader({ version: 1, ...props }))

/** A valid message with one field replaced after construction, as a bug or a cast could leave it. */
const broken = fc.tuple(fc.oneof(user, assistant, tool), wrong, fc.nat()).map(([line, value, pick]) => {
  const keys = Object.keys(line).filter((key) => key !== "_tag")
  const key = keys[pick % keys.length]!
  const nested = pick % 3 === 0 && line instanceof UserMessage && line.envelope !== undefined
    ? new UserMessage({ ...line, envelope: Object.assign(Object.create(Envelope.prototype), line.envelope, { time: value }) }, true)
    : pick % 3 === 0 && line instanceof AssistantMessage && line.usage !== undefined
    ? new AssistantMessage({ ...line, usage: { ...line.usage, outputTokens: value as number } }, true)
    : pick % 3 === 1 && line instanceof AssistantMessage && line.toolCalls.length > 0
    ? new AssistantMessage({ ...line, toolCalls: [{ ...line.toolCalls[0]!, name: value as string }] }, true)
    : undefined
  return nested ?? Object.assign(Object.create(Object.getPrototypeOf(line)), line, { [key]: value }) as SessionLine
})

const outcome = (encode: (line: SessionLine) => string, line: SessionLine) => {
  try {
    return { text: encode(line) }
  } catch (error) {
    return { error: String(error) }
  }
}

describe("session line encoding", () => {
  it("writes kern's messages as the SessionLine schema does, byte for byte (property)", () => {
    fc.assert(
      fc.property(fc.oneof(user, assistant, tool, header), (line) => {
        assert.strictEqual(encodeSessionLine(line), encodeSessionLineBySchema(line))
      }),
      { numRuns: 2000 }
    )
  })

  it("leaves a line with a field of the wrong type to the schema: the same text, or the same error (property)", () => {
    fc.assert(
      fc.property(broken, (line) => {
        assert.deepStrictEqual(outcome(encodeSessionLine, line), outcome(encodeSessionLineBySchema, line))
      }),
      { numRuns: 1000 }
    )
  })

  it("writes optional members only when present", () => {
    assert.strictEqual(
      encodeSessionLine(new AssistantMessage({ text: "hi", at: "t", usage: { inputTokens: 1, outputTokens: 2, cachedInputTokens: 0, cacheWriteTokens: 0, costUsdCents: 0 } })),
      "{\"text\":\"hi\",\"toolCalls\":[],\"usage\":{\"inputTokens\":1,\"outputTokens\":2,\"cachedInputTokens\":0,\"cacheWriteTokens\":0,\"costUsdCents\":0},\"at\":\"t\",\"_tag\":\"assistant\"}"
    )
    assert.strictEqual(encodeSessionLine(new UserMessage({ text: "x", at: "t" })), "{\"text\":\"x\",\"at\":\"t\",\"_tag\":\"user\"}")
  })
})
