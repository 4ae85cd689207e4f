import { type AiError, LanguageModel, type Response } from "@effect/ai"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Either, Fiber, Layer, Option, Stream, TestClock } from "effect"
import * as NodePath from "node:path"
import * as AgentConfig from "../../src/config/AgentConfig.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { Segment } from "../../src/context/Segment.js"
import * as Summarizer from "../../src/context/Summarizer.js"
import { SegmentSummarizer, type SummarizeRequest } from "../../src/context/Summarizer.js"
import { AssistantMessage, Envelope, type SessionMessage, ToolResultMessage, UserMessage } from "../../src/session/messages.js"
import { FakeReply, type FakeModelServerShape, make as makeFakeServer } from "../support/fakeModelServer.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import * as SpendGuard from "../../src/model/SpendGuard.js"

/** The live summarizer over the fake model server (`summaryModel: "cheap"`), and the server. */
const liveSummarizer = Effect.gen(function*() {
  const server = yield* makeFakeServer
  const dir = NodePath.join(makeTempDir("kern-summarizer-"), "agent")
  writeFiles(dir, { ".kern/config.json": JSON.stringify({ model: "m", summaryModel: "cheap", baseURL: server.baseURL, api: "chat" }) })
  const layer = Summarizer.layer.pipe(
    Layer.provide(Layer.mergeAll(AgentConfig.layer(dir), NodeHttpClient.layerUndici, SpendGuard.layerNone)),
    Layer.provide(Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })))
  )
  const context = yield* Layer.build(layer)
  return { server, summarizer: Context.get(context, SegmentSummarizer) }
})

interface ChatBody {
  readonly model: string
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }>
}

/** The text of every message of each model request, joined: what the summary model was asked. */
const prompts = (server: FakeModelServerShape) =>
  Effect.map(server.modelRequests, (requests) =>
    requests.map((request) => {
      const body = request.body as ChatBody
      return {
        model: body.model,
        text: body.messages.map((m) =>
          typeof m.content === "string"
            ? m.content
            : Array.isArray(m.content)
            ? m.content.map((part: { readonly text?: string }) => part.text ?? "").join("")
            : ""
        ).join("\n")
      }
    }))

const at = (second: number) => `2026-03-01T09:00:${String(second).padStart(2, "0")}.000Z`

const conversation: ReadonlyArray<SessionMessage> = [
  new UserMessage({
    text: "Please list the deploy scripts in ops/.",
    envelope: new Envelope({ interface: "telegram", channel: "dm", userId: "ada", time: "2026-03-01T10:00:00+01:00" }),
    at: at(0)
  }),
  new AssistantMessage({ text: "Looking.", toolCalls: [{ id: "c1", name: "bash", params: { command: "ls ops" } }], at: at(1) }),
  new ToolResultMessage({ toolCallId: "c1", toolName: "bash", isError: false, result: "deploy-eu.sh\ndeploy-us.sh", at: at(2) }),
  new AssistantMessage({ text: "There are two: deploy-eu.sh and deploy-us.sh.", at: at(3) })
]

const artifact = "art_0123456789abcdef01234567"

/** A text of `size` characters: a marker at its head, its middle and its tail. */
const markedText = (size: number, middle: string) => {
  const filler = (n: number) => "lorem ipsum dolor sit amet ".repeat(Math.ceil(n / 27)).slice(0, n)
  const half = Math.floor((size - middle.length) / 2) - 20
  return `HEAD-MARKER ${filler(half)} ${middle} ${filler(half)} TAIL-MARKER`
}

const child = (id: number, start: number, end: number, summary: string | null) =>
  new Segment({
    id,
    sessionId: "s",
    level: 0,
    start,
    end,
    tokens: 12_000,
    firstAt: at(start % 60),
    lastAt: at((end - 1) % 60),
    summary,
    summaryTokens: summary === null ? 0 : 40,
    parentId: null
  })

const finish: Response.PartEncoded = { type: "finish", reason: "stop", usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } }

/** Summarizes the test conversation with `layerModel` over a LanguageModel answering with `generate`. */
const summarizeWith = (generate: () => Effect.Effect<Array<Response.PartEncoded>, AiError.AiError>) =>
  Effect.gen(function*() {
    const model = yield* LanguageModel.make({ generateText: generate, streamText: () => Stream.die("not used") })
    const summarizer = yield* Effect.provideService(Summarizer.make, LanguageModel.LanguageModel, model)
    return yield* summarizer.summarize({ level: 0, start: 0, end: 4, messages: conversation, targetTokens: 200 })
  })

const failure = <A>(effect: Effect.Effect<A, Summarizer.SummarizeError>) =>
  Effect.map(Effect.either(effect), (result) => {
    expect(Either.isLeft(result)).toBe(true)
    const error = Option.getOrThrow(Either.getLeft(result))
    expect(error._tag).toBe("SummarizeError")
    return error.message
  })

describe("SegmentSummarizer (live, over the summary model)", () => {
  it.scoped("one request to summaryModel carrying the messages as role lines, tool calls and results", () =>
    Effect.gen(function*() {
      const { server, summarizer } = yield* liveSummarizer
      yield* server.reply(FakeReply.text("  Ada asked for the deploy scripts; there are two.  "))
      const summary = yield* summarizer.summarize({ level: 0, start: 40, end: 44, messages: conversation, targetTokens: 200 })
      expect(summary).toBe("Ada asked for the deploy scripts; there are two.")
      const [request, ...more] = yield* prompts(server)
      expect(more).toEqual([])
      expect(request!.model).toBe("cheap")
      const text = request!.text
      expect(text).toContain("messages 40–43")
      expect(text).toContain("about 200 tokens")
      expect(text).toContain("user (ada via telegram): Please list the deploy scripts in ops/.")
      expect(text).toContain("assistant: Looking.\n→ bash {\"command\":\"ls ops\"}")
      expect(text).toContain("tool bash: deploy-eu.sh\ndeploy-us.sh")
      expect(text).toContain("assistant: There are two: deploy-eu.sh and deploy-us.sh.")
      expect(text).toContain(`from="${at(0)}" to="${at(3)}"`)
      expect(text.indexOf("Please list")).toBeLessThan(text.indexOf("There are two"))
    }))

  it.scoped("a huge message is sent as head and tail with the artifact reference, never its middle", () =>
    Effect.gen(function*() {
      const { server, summarizer } = yield* liveSummarizer
      yield* server.reply(FakeReply.text("A long paste and a long tool output."))
      const paste = markedText(120_000, "PASTE-MIDDLE")
      const output = markedText(90_000, `MIDDLE-MARKER artifact ${artifact}: retrieve_tool_output({ "artifactId": "${artifact}" })`)
      const messages: ReadonlyArray<SessionMessage> = [
        new UserMessage({ text: paste, at: at(0) }),
        new AssistantMessage({ text: "", toolCalls: [{ id: "c1", name: "read", params: { path: "big.log" } }], at: at(1) }),
        new ToolResultMessage({ toolCallId: "c1", toolName: "read", isError: false, result: output, at: at(2) }),
        new AssistantMessage({ text: markedText(50_000, "ANSWER-MIDDLE"), at: at(3) })
      ]
      yield* summarizer.summarize({ level: 0, start: 0, end: 4, messages, targetTokens: 1_500 })
      const [request] = yield* prompts(server)
      const text = request!.text
      expect(text.split("HEAD-MARKER").length - 1).toBe(3)
      expect(text.split("TAIL-MARKER").length - 1).toBe(3)
      for (const middle of ["PASTE-MIDDLE", "MIDDLE-MARKER", "ANSWER-MIDDLE"]) expect(text).not.toContain(middle)
      expect(text).toContain(`the whole text is artifact ${artifact}: retrieve_tool_output({ "artifactId": "${artifact}" })`)
      expect(text).toMatch(/\[… \d+ characters left out/)
      expect(text).toContain(`[… ${paste.length - 12_000} characters left out …]`)
      expect(text.length).toBeLessThan(40_000)
    }))

  it.scoped("level ≥ 1 merges the children's summaries, in order", () =>
    Effect.gen(function*() {
      const { server, summarizer } = yield* liveSummarizer
      yield* server.reply(FakeReply.text("Setup, then the deploy."))
      const children = [child(1, 0, 12, "They set up the repo."), child(2, 12, 30, "They deployed to eu-west-1.")]
      const summary = yield* summarizer.summarize({ level: 1, start: 0, end: 30, children, targetTokens: 300 })
      expect(summary).toBe("Setup, then the deploy.")
      const [request] = yield* prompts(server)
      const text = request!.text
      expect(text).toContain("Merge them, in that order")
      expect(text).toContain(`<summary level="0" messages="0–11" from="${at(0)}" to="${at(11)}">\nThey set up the repo.\n</summary>`)
      expect(text.indexOf("They set up the repo.")).toBeLessThan(text.indexOf("They deployed to eu-west-1."))
      expect(text).toContain("messages 0–29")
    }))

  it.scoped("an empty answer is a SummarizeError, never a summary", () =>
    Effect.gen(function*() {
      const { server, summarizer } = yield* liveSummarizer
      yield* server.reply(FakeReply.empty(), FakeReply.text(" \n "))
      for (let i = 0; i < 2; i++) {
        expect(yield* failure(summarizer.summarize({ level: 0, start: 0, end: 4, messages: conversation, targetTokens: 200 })))
          .toContain("the summary model failed on messages 0–3")
      }
    }))

  it.effect("an answer of only whitespace, from a model that lets it through, is a SummarizeError too", () =>
    Effect.gen(function*() {
      const message = yield* failure(summarizeWith(() => Effect.succeed([{ type: "text", text: "  \n\t " }, finish])))
      expect(message).toContain("empty summary of messages 0–3")
    }))

  it.effect("a model that never answers is a SummarizeError after summaryTimeout", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(failure(summarizeWith(() => Effect.never)))
      yield* TestClock.adjust(Summarizer.summaryTimeout)
      expect(yield* Fiber.join(fiber)).toContain("did not answer for messages 0–3 within 5m")
    }))

  it.scoped("a 500 is retried on the provider schedule; once retries run out it is a SummarizeError with the provider's words", () =>
    Effect.gen(function*() {
      const { server, summarizer } = yield* liveSummarizer
      const request: SummarizeRequest = { level: 0, start: 0, end: 4, messages: conversation, targetTokens: 200 }
      yield* server.reply(FakeReply.error(500), FakeReply.text("Recovered."))
      const recovered = yield* Effect.fork(summarizer.summarize(request))
      yield* server.awaitRequests(1)
      yield* TestClock.adjust("30 seconds")
      expect(yield* Fiber.join(recovered)).toBe("Recovered.")
      expect((yield* server.modelRequests).length).toBe(2)

      yield* server.reply(...Array.from({ length: 4 }, () => FakeReply.error(500)))
      const failing = yield* Effect.fork(failure(summarizer.summarize(request)))
      for (let n = 3; n <= 5; n++) {
        yield* server.awaitRequests(n)
        yield* TestClock.adjust("30 seconds")
      }
      const message = yield* Fiber.join(failing)
      expect(message).toContain("the summary model failed on messages 0–3")
      expect(message).toContain("Scripted failure 500")
      expect((yield* server.modelRequests).length).toBe(6)
    }))

  it.scoped("nothing to summarize, or a child without its summary, fails before any model call", () =>
    Effect.gen(function*() {
      const { server, summarizer } = yield* liveSummarizer
      expect(yield* failure(summarizer.summarize({ level: 0, start: 5, end: 9, messages: [], targetTokens: 200 })))
        .toContain("a level 0 summary needs the segment's messages")
      expect(
        yield* failure(summarizer.summarize({
          level: 1,
          start: 0,
          end: 30,
          children: [child(1, 0, 12, "ok"), child(2, 12, 30, null)],
          targetTokens: 300
        }))
      ).toContain("child segment 2 has no summary yet")
      expect((yield* server.modelRequests).length).toBe(0)
    }))
})

describe("SegmentSummarizer.layerTest", () => {
  const summarize = (request: SummarizeRequest, options?: Summarizer.TestOptions) =>
    Effect.flatMap(SegmentSummarizer, (s) => s.summarize(request)).pipe(Effect.provide(Summarizer.layerTest(options)))

  const request: SummarizeRequest = { level: 0, start: 40, end: 44, messages: conversation, targetTokens: 200 }

  it.effect("is deterministic, names the range and the first words of each message", () =>
    Effect.gen(function*() {
      const first = yield* summarize(request)
      expect(yield* summarize(request)).toBe(first)
      expect(first).toBe(
        "L0 messages 40–43: user: Please list the deploy scripts in ops/. | assistant: Looking. | " +
          "tool: bash: deploy-eu.sh deploy-us.sh | assistant: There are two: deploy-eu.sh and deploy-us.sh."
      )
    }))

  it.effect("stays within about targetTokens × 4 characters", () =>
    Effect.gen(function*() {
      const many = Array.from({ length: 200 }, (_, i) => new UserMessage({ text: `message number ${i} says something long`, at: at(0) }))
      const summary = yield* summarize({ level: 0, start: 0, end: 200, messages: many, targetTokens: 200 })
      expect(summary.length).toBeLessThanOrEqual(800)
      expect(summary.startsWith("L0 messages 0–199: ")).toBe(true)
    }))

  it.effect("level ≥ 1 is built from the children's summaries", () =>
    Effect.gen(function*() {
      const summary = yield* summarize({
        level: 1,
        start: 0,
        end: 30,
        children: [child(1, 0, 12, "They set up the repo."), child(2, 12, 30, "They deployed.")],
        targetTokens: 300
      })
      expect(summary).toBe("L1 messages 0–29: They set up the repo. | They deployed.")
    }))

  it.effect("fails the requests failWhen picks, and only those", () =>
    Effect.gen(function*() {
      const options = { failWhen: (r: SummarizeRequest) => r.start === 40 }
      expect(yield* failure(summarize(request, options))).toContain("told to fail on messages 40–43")
      expect(yield* summarize({ ...request, start: 0, end: 4 }, options)).toContain("L0 messages 0–3")
    }))
})
