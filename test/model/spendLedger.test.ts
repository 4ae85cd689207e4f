import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Either, Layer } from "effect"
import * as NodePath from "node:path"
import * as AgentConfig from "../../src/config/AgentConfig.js"
import { decodeConfigFile } from "../../src/config/decode.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import * as Summarizer from "../../src/context/Summarizer.js"
import { SpendAttribution, turnAttribution } from "../../src/model/SpendAttribution.js"
import * as SpendGuard from "../../src/model/SpendGuard.js"
import * as Embedder from "../../src/recall/Embedder.js"
import { UserMessage } from "../../src/session/messages.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { databases } from "../support/databases.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

/** The ledger's rows of a scope, as `scope:key calls tokens`. */
const rows = (scope: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ key: string; calls: number; inputTokens: number; outputTokens: number }>`SELECT key, calls, input_tokens, output_tokens FROM spend_ledger WHERE scope = ${scope} ORDER BY key`,
      (found) => found.map((row) => `${row.key} ${row.calls} ${row.inputTokens + row.outputTokens}`)
    ))

describe.each(databases)("the spend ledger on $dialect", ({ layer }) => {
  it.scoped("summary calls are recorded to the conversation they summarize; embeddings to the agent, and refused by its cap", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = NodePath.join(makeTempDir(), "agent")
      writeFiles(dir, {
        ".kern/config.json": JSON.stringify({
          model: "m", summaryModel: "cheap", embeddingModel: "fake-embed", baseURL: server.baseURL, api: "chat", timezone: "UTC",
          limits: { perDay: { tokens: 60 } }
        })
      })
      const below = Layer.mergeAll(AgentConfig.layer(dir), layer, NodeHttpClient.layerUndici).pipe(
        Layer.provideMerge(Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })))
      )
      const built = yield* Layer.build(Layer.mergeAll(Summarizer.layer, Embedder.layerFromConfig).pipe(
        Layer.provideMerge(SpendGuard.layer),
        Layer.provideMerge(below)
      ))
      const summarizer = Context.get(built, Summarizer.SegmentSummarizer)
      const embedder = Context.get(built, Embedder.Embedder)
      const rowsOf = (scope: string) => Effect.provide(rows(scope), built)
      yield* Effect.gen(function*() {
        yield* server.reply(FakeReply.text("A summary."))
        const who = turnAttribution("turn", { conversationId: "telegram:7", interface: "telegram", channel: "7", userId: "7" })
        const messages = [new UserMessage({ text: "please book a table", at: "2026-01-01T00:00:00.000Z" })]
        expect(yield* summarizer.summarize({ level: 0, start: 0, end: 1, targetTokens: 50, messages }).pipe(
          Effect.provideService(SpendAttribution, who)
        )).toBe("A summary.")
      })
      yield* embedder.embed(["one two three four five six seven eight"])
      expect(yield* rowsOf("purpose")).toEqual(["embedding 1 10", "summary 1 19"])
      expect(yield* rowsOf("conversation")).toEqual(["telegram:7 1 19"])
      expect(yield* rowsOf("user")).toEqual(["telegram:7 1 19"])
      // 29 of 60 tokens: two more batches of 16 tokens fill it (61), and the next is refused before it is sent.
      const long = "x".repeat(64)
      for (let i = 0; i < 2; i++) yield* embedder.embed([long])
      const before = (yield* server.requests).length
      const refused = yield* Effect.either(embedder.embed([long]))
      expect(Either.isLeft(refused) && refused.left.message).toContain("BUDGET_EXCEEDED: the daily cap limits.perDay.tokens (60 tokens)")
      expect((yield* server.requests).length).toBe(before)
      // The operator is told once per cap and day, however many calls it refuses.
      expect(Either.isLeft(yield* Effect.either(embedder.embed([long])))).toBe(true)
      const notices = yield* Effect.provide(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ key: string }>`SELECT key FROM notices`), built)
      expect(notices.map((row) => row.key)).toEqual(["limits.perDay.tokens::1970-01-01"])
    }))
})

describe("the spend limits' config", () => {

  it("limits: negative numbers and unknown keys are clear errors", () => {
    const decoded = (limits: unknown) => decodeConfigFile("config.json", { limits }, "agent")
    const negative = decoded({ perDay: { usdCents: -1 } })
    expect(Either.isLeft(negative) && negative.left.message).toBe(
      "config.json: key \"limits.perDay.usdCents\": expected " +
        "an object { perDay?, perUser?, perChannel? }, each { usdCents?: a number ≥ 0 (US cents), tokens?: an integer ≥ 0 } " +
        "(per day in the agent's timezone: the whole agent, each user, each channel), found the number -1"
    )
    const misspelt = decoded({ perDya: { tokens: 5 } })
    expect(Either.isLeft(misspelt) && misspelt.left.message).toContain("unknown key \"limits.perDya\": did you mean \"limits.perDay\"?")
    const unknownMeasure = decoded({ perUser: { dollars: 5 } })
    expect(Either.isLeft(unknownMeasure) && unknownMeasure.left.message).toContain("key \"limits.perUser.dollars\"")
    const top = decodeConfigFile("config.json", { limit: {} }, "agent")
    expect(Either.isLeft(top) && top.left.message).toContain("did you mean \"limits\"?")
    const fine = decoded({ perDay: { usdCents: 0 }, perChannel: { tokens: 1000 } })
    expect(Either.isRight(fine) && fine.right.config.limits).toEqual({ perDay: { usdCents: 0 }, perChannel: { tokens: 1000 } })
  })
})
