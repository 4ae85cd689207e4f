import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { toPromptMessages } from "../../src/context/prompt.js"
import { SessionHistory } from "../../src/context/SessionHistory.js"
import { AssistantMessage, type SessionMessage, ToolResultMessage, UserMessage } from "../../src/session/messages.js"

const at = "2026-11-22T10:00:00.000Z"
const system = "you are kern"

/** One turn: a question, a step of two tool calls and their results (one tool message), the answer. */
const turn = (t: number, result: (t: number, k: number) => unknown = (n, k) => `result ${n}.${k}`): ReadonlyArray<SessionMessage> => [
  new UserMessage({ text: `question ${t}`, at }),
  new AssistantMessage({
    text: "",
    toolCalls: [{ id: `a${t}`, name: "read", params: { path: "a" } }, { id: `b${t}`, name: "read", params: { path: "b" } }],
    at
  }),
  new ToolResultMessage({ toolCallId: `a${t}`, toolName: "read", isError: false, result: result(t, 0), at }),
  new ToolResultMessage({ toolCallId: `b${t}`, toolName: "read", isError: false, result: result(t, 1), at }),
  new AssistantMessage({ text: `answer ${t}`, at })
]
const turns = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => turn(from + i)).flat()

const open = (messages: ReadonlyArray<SessionMessage>, base: number) =>
  SessionHistory.make(messages, {
    sessionId: "s1",
    base,
    maxToolResultChars: 20_000,
    count: Effect.succeed((text: string) => text.length)
  })

/** What converting every message at once gives from `from` (a user message) on: the prompt as it always was. */
const expected = (messages: ReadonlyArray<SessionMessage>, from: number) => toPromptMessages(system, messages.slice(from))

describe("the prompt of a session's history", () => {
  it.effect("from any cut, from the first message held, and as a copy: the messages a whole conversion gives", () =>
    Effect.gen(function*() {
      const messages = turns(0, 6)
      const history = yield* open(messages, 100)
      // First asked from a late cut, then from earlier ones (converted again), then whole.
      for (const cut of [25, 10, 5]) {
        assert.deepStrictEqual((yield* history.prompt(system, 100 + cut)).content, expected(messages, cut))
        assert.deepStrictEqual((yield* history.promptCopy(system, 100 + cut)).content, expected(messages, cut))
      }
      assert.deepStrictEqual((yield* history.prompt(system)).content, expected(messages, 0))
      assert.deepStrictEqual((yield* history.prompt(system, 100 + 30)).content, expected(messages, 30))
    }))

  it.effect("with messages appended and let go before and after the first prompt", () =>
    Effect.gen(function*() {
      const messages = turns(0, 4)
      const more = turns(4, 6)
      const history = yield* open(messages, 0)
      // Appended before any prompt, then let go of a part never converted.
      for (const message of more.slice(0, 5)) yield* history.append(message)
      yield* history.dropBefore(5)
      assert.deepStrictEqual((yield* history.prompt(system, 15)).content, expected([...messages, ...more.slice(0, 5)], 15))
      assert.deepStrictEqual((yield* history.prompt(system)).content, expected([...messages, ...more.slice(0, 5)], 5))
      // Appended after, then let go of a converted part: the prompt messages kept are the very ones sent before.
      for (const message of more.slice(5)) yield* history.append(message)
      const before = (yield* history.prompt(system, 20)).content
      yield* history.dropBefore(20)
      const after = (yield* history.prompt(system)).content
      assert.deepStrictEqual(after, expected([...messages, ...more], 20))
      after.slice(1).forEach((message, i) => assert.strictEqual(message, before[i + 1]))
    }))

  it.effect("opening a session converts none of its messages; the first prompt converts those from its cut on", () =>
    Effect.gen(function*() {
      let conversions = 0
      // A result that says when it is converted for the model (turned into text to be measured against the cap).
      const watched = (t: number, k: number) => ({ toJSON: () => (conversions++, `result ${t}.${k}`) })
      const messages = Array.from({ length: 1000 }, (_, t) => turn(t, watched)).flat()
      const history = yield* open(messages, 0)
      assert.strictEqual(conversions, 0)
      yield* history.prompt(system, 999 * 5)
      assert.strictEqual(conversions, 2)
      assert.strictEqual((yield* history.size), 5000)
    }))
})
