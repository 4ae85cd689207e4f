import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SessionHistory } from "../../src/context/SessionHistory.js"
import { toolResultInContext } from "../../src/context/sentText.js"
import { AssistantMessage, ToolResultMessage, UserMessage } from "../../src/session/messages.js"

const at = "2026-01-01T00:00:00.000Z"
const count = (text: string) => Math.ceil(text.length / 4)

describe("tool results in the context", () => {
  it("a result over maxToolResultChars is cut with a note naming the artifact, or the recall load of that message", () => {
    const compacted = `[output compacted: 90000 bytes → 30000 bytes; full output is artifact art_7f3a00112233445566778899: retrieve_tool_output({ "artifactId": "art_7f3a00112233445566778899" }) with offset/limit/grep]\n${"x".repeat(30_000)}`
    const cut = toolResultInContext(compacted, 20_000, { sessionId: "s1", index: 12 }) as string
    expect(cut.length).toBeLessThan(20_200)
    expect(cut.startsWith(compacted.slice(0, 20_000))).toBe(true)
    expect(cut).toContain(`${compacted.length - 20_000} more characters`)
    expect(cut).toContain("retrieve_tool_output({ \"artifactId\": \"art_7f3a00112233445566778899\" })")

    const plain = "y".repeat(25_000)
    const viaRecall = toolResultInContext(plain, 20_000, { sessionId: "s1", index: 12 }) as string
    expect(viaRecall).toContain("recall({ \"mode\": \"load\", \"sessionId\": \"s1\", \"messageStart\": 12, \"messageEnd\": 12 })")

    // JSON results are measured as JSON; short ones pass whole, as themselves.
    expect(toolResultInContext({ ok: true }, 20_000, { sessionId: "s1", index: 1 })).toEqual({ ok: true })
    expect(String(toolResultInContext({ rows: "z".repeat(30_000) }, 20_000, { sessionId: "s1", index: 1 }))).toContain("cut from the context")
    expect(toolResultInContext("short", 20_000, { sessionId: "s1", index: 1 })).toBe("short")
  })

  it.effect("the prompt carries the cut result and counts it as cut; the history keeps the whole result", () =>
    Effect.gen(function*() {
      const whole = "line\n".repeat(10_000)
      const messages = [
        new UserMessage({ text: "read the log", at }),
        new AssistantMessage({ text: "", toolCalls: [{ id: "c1", name: "read", params: { path: "log" } }], at }),
        new ToolResultMessage({ toolCallId: "c1", toolName: "read", isError: false, result: whole, at }),
        new AssistantMessage({ text: "done", at })
      ]
      const history = yield* SessionHistory.make(messages, { sessionId: "s1", maxToolResultChars: 1_000, count: Effect.succeed(count) })
      const prompt = yield* history.prompt("system")
      const tool = prompt.content.find((message) => message.role === "tool")!
      const part = (tool.content as ReadonlyArray<{ readonly result: unknown }>)[0]!
      expect(String(part.result).length).toBeLessThan(1_200)
      expect(String(part.result)).toContain("messageStart\": 2")
      const window = yield* history.window
      expect(window.tokens[2]).toBeLessThan(400)
      const held = yield* history.messages
      expect((held[2] as ToolResultMessage).result).toBe(whole)
    }))
})
