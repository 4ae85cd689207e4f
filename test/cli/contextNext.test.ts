import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodePath from "node:path"
import { Inbox, layerSql } from "../../src/runtime/Inbox.js"
import * as Database from "../../src/storage/Database.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { runKernIn } from "../support/inProcessCli.js"

const env = { OPENROUTER_API_KEY: "sk-test" }

const kern = (args: ReadonlyArray<string>, dir: string) => Effect.promise(() => runKernIn([...args, "--dir", dir], { env }))

interface NextJson {
  readonly request: string
  readonly sessionId: string | null
  readonly messages: number
  readonly tokens: { readonly system: number; readonly tools: number; readonly raw: number; readonly total: number }
  readonly system: ReadonlyArray<{ readonly kind: string }>
  readonly leftOut: ReadonlyArray<string>
}

describe("kern context show says what the next request is, and what its figures leave out", () => {
  it.live("on a new agent (no turn yet) it shows the first turn's request: the system prompt, the tools, no messages", () =>
    Effect.gen(function*() {
      // The model is never called: context show only builds the request.
      const dir = initAgentWithModel("http://127.0.0.1:9/v1", { recall: false, embeddingModel: false })
      const shown = yield* kern(["context", "show"], dir)
      expect(shown.status, shown.stderr).toBe(0)
      expect(shown.stdout).toContain("no session yet: the first turn's request is the system prompt and the tools")
      expect(shown.stdout).toContain("raw window: empty (no messages yet)")
      expect(shown.stdout).toMatch(/system prompt:\n.*section/)

      const json = yield* kern(["context", "show", "--json"], dir)
      expect(json.status, json.stderr).toBe(0)
      const next = JSON.parse(json.stdout) as NextJson
      expect(next).toMatchObject({ request: "next", sessionId: null, messages: 0 })
      expect(next.tokens.raw).toBe(0)
      expect(next.tokens.system).toBeGreaterThan(0)
      expect(next.tokens.tools).toBeGreaterThan(0)
      expect(next.tokens.total).toBe(next.tokens.system + next.tokens.tools)
      expect(next.system.map((section) => section.kind)).toContain("tools")

      // The commands that need a session still say there is none.
      const segments = yield* kern(["segments", "list"], dir)
      expect(segments.status).toBe(1)
      expect(segments.stderr).toContain("no session yet")
    }))

  it.live("a message waiting in the inbox, auto-recall and a paired user's toolset are named as left out", () =>
    Effect.gen(function*() {
      const dir = initAgentWithModel("http://127.0.0.1:9/v1", { recall: false, embeddingModel: false, autoRecall: true, autoRecallTokens: 1_500 })
      const plain = JSON.parse((yield* kern(["context", "show", "--json"], dir)).stdout) as NextJson
      expect(plain.leftOut[0]).toBe("the next turn's own message")

      // A message accepted by an agent that stopped before answering it: the next turn answers it first.
      yield* Effect.flatMap(Inbox, (inbox) => inbox.add({ interface: "web", channel: "web", userId: "operator", text: "hi" })).pipe(
        Effect.provide(layerSql.pipe(Layer.provide(Database.layer({ filename: NodePath.join(dir, ".kern", "kern.db") }))))
      )
      const json = yield* kern(["context", "show", "--json"], dir)
      expect(json.status, json.stderr).toBe(0)
      const next = JSON.parse(json.stdout) as NextJson
      expect(next.leftOut).toEqual([
        "the next turn's own message (1 message waits in the inbox: the next turn answers the first)",
        "what auto-recall adds for that message once messages are trimmed (up to 1,500 tokens)",
        "a paired user's turn is offered only their scope's tools (these figures count the operator's)"
      ])
      const text = yield* kern(["context", "show"], dir)
      expect(text.stdout).toContain(`not in these figures: ${next.leftOut.join("; ")}`)
    }))
})
