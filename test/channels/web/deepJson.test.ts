import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { FakeReply } from "../../support/fakeModelServer.js"
import { bearer, request, startServer } from "./harness.js"

const json = { ...bearer, "content-type": "application/json" }

const arrays = (depth: number, inner = "1") => `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`
const objects = (depth: number, inner = "1") => `${"{\"a\":".repeat(depth)}${inner}${"}".repeat(depth)}`
const mixed = (depth: number) => `${"[{\"a\":".repeat(depth / 2)}1${"}]".repeat(depth / 2)}`

/** Tool-call argument texts nested too deep, each in a different form: all are refused before any walk. */
const deepArguments: ReadonlyArray<readonly [string, string]> = [
  ["arrays, 3,000 deep", `{"path": ${arrays(3000)}}`],
  ["objects, 3,000 deep", `{"path": ${objects(3000)}}`],
  ["mixed, 3,000 deep", `{"path": ${mixed(3000)}}`],
  ["arrays, 100,000 deep", `{"path": ${arrays(100_000)}}`],
  ["one level past the limit", `{"path": ${arrays(100)}}`]
]

/** Brackets inside strings are text, not nesting: these reach the tool's own argument check. */
const shallowArguments: ReadonlyArray<readonly [string, string]> = [
  ["brackets in a string", `{"path": "${"[{".repeat(3000)}"}`],
  ["escaped quotes before brackets", `{"path": "\\"${"[".repeat(3000)}\\\\", "limit": "x"}`],
  ["at the limit", `{"path": ${arrays(99)}}`]
]

for (const [provider, config, model] of [
  ["Chat Completions (streamed deltas)", {}, {}],
  ["the Responses API", { provider: "openai", apiKeyEnv: "OPENROUTER_API_KEY" }, {}],
  ["Anthropic (parsed by its library)", { provider: "anthropic", apiKeyEnv: "OPENROUTER_API_KEY" }, { messagesApi: true }]
] as const) {
  describe(`tool-call arguments nested too deep over ${provider}`, () => {
    it.live("are a VALIDATION_ERROR naming the depth; the turn goes on and the runtime keeps serving", () =>
      Effect.scoped(Effect.gen(function*() {
        // The 100,000-deep arguments fill the context, so the summarizer asks the model too: every ask after the
        // tool calls is answered "done".
        const { base, client, model: server } = yield* startServer({ config, model: { ...model, fallback: FakeReply.text("done") } })
        const calls = [...deepArguments, ...shallowArguments]
        yield* server.reply(FakeReply.toolCalls(calls.map(([, args], i) => ({ id: `call_${i}`, name: "read", args }))))
        const events = yield* client.events()
        const { turnId } = yield* client.send({ text: "read it" })
        const seen = yield* events.pipe(
          Stream.takeUntil((e) => e.type === "outgoing" && e.turnId === turnId),
          Stream.runCollect
        )
        const results = [...seen].flatMap((e) => (e.type === "tool-result" && e.turnId === turnId ? [e] : []))
        expect(results).toHaveLength(calls.length)
        const byId = new Map(results.map((e) => [e.id, e.text]))
        deepArguments.forEach(([what], i) => {
          const result = byId.get(`call_${i}`) ?? ""
          expect(result, what).toMatch(/^VALIDATION_ERROR: invalid arguments for read: the arguments are nested more than 100 levels deep/)
        })
        shallowArguments.forEach(([what], i) => {
          const result = byId.get(`call_${deepArguments.length + i}`) ?? ""
          expect(result, what).not.toContain("nested more than")
        })
        expect([...seen].find((e) => e.type === "finish" && e.turnId === turnId)).toMatchObject({ reply: "done" })
        const health = yield* request(`${base}/health`)
        expect(health.status).toBe(200)
        expect(health.json).toMatchObject({ ok: true })
      })), 120_000)
  })
}

describe("HTTP bodies nested too deep", () => {
  it.live("are a 400 naming the depth, never a 500; the server goes on", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base } = yield* startServer({ bodyLimitBytes: 1_000_000 })
      const bodies: ReadonlyArray<readonly [string, string]> = [
        ["arrays", arrays(3000)],
        ["objects", objects(3000)],
        ["mixed", mixed(3000)],
        ["arrays 100,000 deep", arrays(100_000)],
        ["deep under a field", `{"text": ${arrays(3000)}}`],
        ["deep beside a good field", `{"text": "hi", "channel": ${objects(3000)}}`],
        ["deep and cut short", "[".repeat(3000)]
      ]
      for (const [what, body] of bodies) {
        const answer = yield* request(`${base}/message`, { method: "POST", headers: json, body })
        expect(answer.status, what).toBe(400)
        expect(answer.json, what).toMatchObject({ field: "body", error: expect.stringContaining("nested more than 100 levels deep") })
      }
      // Brackets inside the text are text.
      const text = yield* request(`${base}/message`, { method: "POST", headers: json, body: JSON.stringify({ text: "[".repeat(3000) }) })
      expect(text.status).toBe(202)
      expect((yield* request(`${base}/health`)).status).toBe(200)
    })), 120_000)
})
