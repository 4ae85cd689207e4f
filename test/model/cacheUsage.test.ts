import { LanguageModel, Prompt } from "@effect/ai"
import { NodeHttpClient } from "@effect/platform-node"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Ref, Schema } from "effect"
import * as NodePath from "node:path"
import { openActiveSession } from "../../src/runtime/activeSession.js"
import { MessageQueue } from "../../src/turn/MessageQueue.js"
import { modelStep } from "../../src/turn/modelStep.js"
import type { TurnEvent } from "../../src/turn/TurnEvent.js"
import { TurnRunner } from "../../src/turn/TurnRunner.js"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { KernConfigFile } from "../../src/config/schema.js"
import { usageTotals } from "../../src/session/usageTotals.js"
import { finishPart } from "../../src/model/ChatCompletionsResponse.js"
import { finishUsage } from "../../src/model/finishUsage.js"
import { costCents, priceFor, priceTable, usageCostCents } from "../../src/model/pricing.js"
import { layerFromConfig } from "../../src/model/Provider.js"
import { FakeReply, type FakeModelServerShape, type FakeUsage, makeWith } from "../support/fakeModelServer.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { loadedConfig } from "./harness.js"
import * as SpendGuard from "../../src/model/SpendGuard.js"

/** 10,000 prompt tokens: 6,000 read from the cache, 3,000 written to it, 1,000 neither; 500 out. */
const cacheUsage: FakeUsage = { input: 10_000, output: 500, cached: 6_000, cacheWrite: 3_000 }

/** claude-sonnet-4 at $3 input, $0.30 cache read, $3.75 cache write, $15 output per million tokens, in cents. */
const sonnetCents = (1_000 * 3 + 6_000 * 0.3 + 3_000 * 3.75 + 500 * 15) / 1_000_000 * 100

describe("cache writes priced", () => {
  it("built-in Anthropic prices charge cache writes at 1.25× input, reads at 0.1×", () => {
    for (const id of ["claude-opus-4", "claude-sonnet-4", "claude-3-7-sonnet", "claude-3-5-haiku", "claude-haiku-4-5", "claude-opus-4-5"]) {
      const price = Option.getOrThrow(priceFor(id))
      expect(price.cacheWrite).toBeCloseTo(price.input * 1.25, 10)
      expect(price.cachedInput).toBeCloseTo(price.input * 0.1, 10)
    }
    // OpenRouter's dotted names find the same rows as Anthropic's dashed ones.
    expect(priceFor("anthropic/claude-sonnet-4.5")).toEqual(priceFor("claude-sonnet-4-5-20250929"))
    expect(priceFor("anthropic/claude-opus-4.5").pipe(Option.map((p) => p.input))).toEqual(Option.some(5))
    expect(priceFor("anthropic/claude-opus-4.1").pipe(Option.map((p) => p.input))).toEqual(Option.some(15))
    expect(priceFor("openai/gpt-4.1-mini")).toEqual(Option.some({ input: 0.4, cachedInput: 0.1, output: 1.6 }))
  })

  it("charges uncached input, reads, writes and output each at their rate", () => {
    const price = { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 }
    const usage = { inputTokens: 10_000, outputTokens: 500, cachedInputTokens: 6_000, cacheWriteTokens: 3_000 }
    expect(costCents(price, usage)).toBeCloseTo(sonnetCents, 10)
    expect(usageCostCents("anthropic/claude-sonnet-4", usage)).toBeCloseTo(sonnetCents, 10)
    // Without a cache-write price, writes cost the input price; counts above the input are clamped.
    expect(costCents({ input: 2, cachedInput: 0.5, output: 8 }, { inputTokens: 1_000_000, cacheWriteTokens: 400_000 }))
      .toBeCloseTo(200, 6)
    expect(costCents(price, { inputTokens: 100, cachedInputTokens: 80, cacheWriteTokens: 80 }))
      .toBeCloseTo((80 * 0.3 + 20 * 3.75) / 1_000_000 * 100, 10)
  })

  it("config prices take an optional cacheWrite", () => {
    const file = Schema.decodeUnknownSync(KernConfigFile)({
      prices: { "my/claude": { input: 1, cacheWrite: 2, output: 3 }, "my/other": { input: 1, output: 1 } }
    })
    const table = priceTable(file.prices)
    expect(table["my/claude"]).toEqual({ input: 1, cachedInput: 1, cacheWrite: 2, output: 3 })
    expect(usageCostCents("my/claude", { inputTokens: 1_000_000, cacheWriteTokens: 1_000_000 }, table)).toBeCloseTo(200, 6)
    expect(usageCostCents("my/other", { inputTokens: 1_000_000, cacheWriteTokens: 1_000_000 }, table)).toBeCloseTo(100, 6)
    expect(() => Schema.decodeUnknownSync(KernConfigFile)({ prices: { m: { input: 1, output: 1, cacheWrite: -1 } } })).toThrow()
  })
})

describe("cache tokens read from each provider's usage", () => {
  it("Chat Completions: OpenRouter's cached_tokens and cache_write_tokens, or Anthropic's names (LiteLLM)", () => {
    const openRouter = finishPart("stop", {
      prompt_tokens: 10_000,
      completion_tokens: 500,
      prompt_tokens_details: { cached_tokens: 6_000, cache_write_tokens: 3_000 }
    })
    expect(finishUsage(openRouter)).toEqual({ inputTokens: 10_000, outputTokens: 500, cachedInputTokens: 6_000, cacheWriteTokens: 3_000 })
    const liteLlm = finishPart("stop", {
      prompt_tokens: 10_000,
      completion_tokens: 500,
      cache_read_input_tokens: 6_000,
      cache_creation_input_tokens: 3_000
    })
    expect(finishUsage(liteLlm)).toEqual(finishUsage(openRouter))
    // No cache fields: no metadata, and nothing counted as cached.
    const plain = finishPart("stop", { prompt_tokens: 10, completion_tokens: 2 })
    expect(plain.metadata).toBeUndefined()
    expect(finishUsage(plain)).toEqual({ inputTokens: 10, outputTokens: 2, cachedInputTokens: 0, cacheWriteTokens: 0 })
  })

  it("Anthropic: input_tokens leaves out cache reads and writes, which are added back", () => {
    const part = {
      usage: { inputTokens: 1_000, outputTokens: 500, cachedInputTokens: 6_000 },
      metadata: { anthropic: { usage: { input_tokens: 1_000, cache_read_input_tokens: 6_000, cache_creation_input_tokens: 3_000, output_tokens: 500 } } }
    }
    expect(finishUsage(part)).toEqual({ inputTokens: 10_000, outputTokens: 500, cachedInputTokens: 6_000, cacheWriteTokens: 3_000 })
    const nulls = { usage: { inputTokens: 7, outputTokens: 1 }, metadata: { anthropic: { usage: { input_tokens: 7, cache_read_input_tokens: null, cache_creation_input_tokens: null } } } }
    expect(finishUsage(nulls)).toEqual({ inputTokens: 7, outputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0 })
  })
})

/** One model step against the fake server with the model `config` selects; returns the step's usage. */
const stepUsage = (config: Record<string, unknown>, env: Record<string, string>) =>
  Effect.gen(function*() {
    const server = yield* makeWith({ messagesApi: true })
    yield* server.reply(FakeReply.text("Cached.", { usage: cacheUsage }))
    const layer = layerFromConfig(loadedConfig({ ...config, baseURL: server.baseURL }, env), { retry: false }).pipe(Layer.provide(SpendGuard.layerNone))
    const result = yield* Effect.gen(function*() {
      const model = yield* LanguageModel.LanguageModel
      return yield* modelStep({
        model,
        modelId: String(config["model"]),
        prices: {},
        prompt: Prompt.make("hello"),
        toolkit: undefined,
        toolIdOf: () => undefined,
        emit: () => Effect.void
      })
    }).pipe(Effect.provide(layer.pipe(Layer.provide(NodeHttpClient.layerUndici))))
    expect(result.text).toBe("Cached.")
    return { usage: result.usage, requests: yield* server.modelRequests }
  })

describe("a model step's usage with cache reads and writes", () => {
  it.scoped("over Chat Completions (OpenRouter, an anthropic/ model) costs what the table says", () =>
    Effect.gen(function*() {
      const { usage, requests } = yield* stepUsage({ provider: "openrouter", model: "anthropic/claude-sonnet-4" }, { OPENROUTER_API_KEY: "k" })
      expect(requests[0]?.path).toBe("/chat/completions")
      expect(usage).toMatchObject({ inputTokens: 10_000, outputTokens: 500, cachedInputTokens: 6_000, cacheWriteTokens: 3_000 })
      expect(usage.costUsdCents).toBeCloseTo(sonnetCents, 10)
    }))

  it.scoped("over Anthropic's Messages API costs the same", () =>
    Effect.gen(function*() {
      const { usage, requests } = yield* stepUsage({ provider: "anthropic", model: "claude-sonnet-4" }, { ANTHROPIC_API_KEY: "k" })
      expect(requests[0]?.path).toBe("/messages")
      expect(usage).toMatchObject({ inputTokens: 10_000, outputTokens: 500, cachedInputTokens: 6_000, cacheWriteTokens: 3_000 })
      expect(usage.costUsdCents).toBeCloseTo(sonnetCents, 10)
    }))
})

/** The whole agent runtime over a temp folder whose model is the fake server (Chat Completions and Messages). */
const withAgent = <A, E>(
  config: (server: FakeModelServerShape) => Record<string, unknown>,
  body: (server: FakeModelServerShape) => Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof agentRuntimeLayer>>>
) =>
  Effect.scoped(Effect.gen(function*() {
    const server = yield* makeWith({ messagesApi: true })
    const dir = NodePath.join(makeTempDir(), "agent")
    writeFiles(dir, { ".kern/config.json": JSON.stringify(config(server)), "IDENTITY.md": "# IDENTITY.md\nI am the test agent.\n" })
    const runtime = agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 }).pipe(
      Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test", ANTHROPIC_API_KEY: "ak-test" })),
      Layer.provide(NodeContext.layer)
    )
    return yield* body(server).pipe(Effect.provide(runtime))
  }))

const turn = (text: string) =>
  Effect.scoped(Effect.gen(function*() {
    const queue = yield* MessageQueue
    const runner = yield* TurnRunner
    const { session } = yield* openActiveSession()
    yield* queue.offer({ interface: "web", channel: "web:1", userId: "u1", text })
    const message = yield* queue.next
    const events = yield* Ref.make<ReadonlyArray<TurnEvent>>([])
    yield* runner.run({ message, session, emit: (event) => Ref.update(events, (all) => [...all, event]) })
    yield* queue.endTurn("main")
    return { events: yield* Ref.get(events), messages: yield* session.history.messages }
  }))

describe("a turn's usage with cache reads and writes", () => {
  // The config's price for the model, with its own cache-write rate, over the built-in one.
  const prices = { "anthropic/claude-sonnet-4": { input: 3, cachedInput: 0.3, cacheWrite: 6, output: 15 } }
  const configCents = (1_000 * 3 + 6_000 * 0.3 + 3_000 * 6 + 500 * 15) / 1_000_000 * 100

  for (const [name, config] of [
    ["OpenRouter", { provider: "openrouter", model: "anthropic/claude-sonnet-4", prices }],
    ["Anthropic", { provider: "anthropic", model: "claude-sonnet-4", prices: { "claude-sonnet-4": prices["anthropic/claude-sonnet-4"] } }]
  ] as const) {
    it.live(`${name}: reported, persisted with the answer, priced by the config and summed in the usage totals`, () =>
      withAgent((server) => ({ ...config, baseURL: server.baseURL, recall: false }), (server) =>
        Effect.gen(function*() {
          yield* server.reply(FakeReply.text("Nothing since yesterday.", { usage: cacheUsage }))
          const { events, messages } = yield* turn("what changed?")
          const finish = events.find((e) => e.type === "finish")
          const usage = finish?.type === "finish" ? finish.usage : undefined
          expect(usage).toMatchObject({ inputTokens: 10_000, cachedInputTokens: 6_000, cacheWriteTokens: 3_000, outputTokens: 500 })
          expect(usage?.costUsdCents ?? -1).toBeCloseTo(configCents, 10)
          const answer = messages.find((m) => m._tag === "assistant")
          expect(answer?._tag === "assistant" ? answer.usage : undefined).toMatchObject({ cacheWriteTokens: 3_000 })
          const totals = yield* usageTotals
          expect(totals).toMatchObject({ turns: 1, inputTokens: 10_000, cachedInputTokens: 6_000, cacheWriteTokens: 3_000 })
          expect(totals.costUsdCents).toBeCloseTo(configCents, 10)
        })))
  }
})
