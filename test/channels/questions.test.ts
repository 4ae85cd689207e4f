import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Option, Schedule } from "effect"
import { Questions } from "../../src/tools/Questions.js"
import { FakeReply } from "../support/fakeModelServer.js"
import { offeredTools, toolResultsById } from "../support/modelRequests.js"
import { bearer, request, startServer } from "./web/harness.js"

const json = { ...bearer, "content-type": "application/json" }

interface Pending {
  readonly id: string
  readonly question: string
  readonly options: ReadonlyArray<string>
  readonly interface: string
}

/** Waits until the running agent holds `count` questions. */
const awaitQuestions = (base: string, count: number) =>
  request(`${base}/questions`, { headers: bearer }).pipe(
    Effect.map((answer) => (answer.json as { readonly questions: ReadonlyArray<Pending> }).questions),
    Effect.filterOrFail((questions) => questions.length === count),
    Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("20 seconds")))
  )

const askCall = (args: Record<string, unknown>) => FakeReply.toolCalls([{ id: "q1", name: "ask_user_question", args }])
const deploy = { question: "Which branch should I deploy?", options: ["main", "staging", "dev"] }

const send = (base: string, body: Record<string, unknown>) =>
  request(`${base}/message`, { method: "POST", headers: json, body: JSON.stringify(body) }).pipe(
    Effect.map((answer) => (answer.json as { readonly turnId: string }).turnId)
  )

/**
 * The agent with the HTTP API, and a client that shows the questions of `web` turns (as a UI would: the web UI has no
 * question dialog yet, so the server alone does not offer the tool to web turns).
 */
const startShowing = (options: Parameters<typeof startServer>[0]) =>
  Effect.gen(function*() {
    const server = yield* startServer(options)
    yield* Context.get(server.context, Questions).showOn("web")
    return server
  })

describe("ask_user_question over the HTTP API (web turns)", () => {
  it.live("the question waits with its options; the operator's answer is what the model reads next", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, model } = yield* startShowing({ config: { recall: false } })
      yield* model.reply(askCall(deploy), FakeReply.text("deploying staging"))
      yield* send(base, { text: "deploy it" })
      const [pending] = yield* awaitQuestions(base, 1)
      expect(pending).toMatchObject({ question: deploy.question, options: deploy.options, interface: "web" })
      const [first] = yield* model.awaitRequests(1)
      expect(offeredTools(first!.body)).toContain("ask_user_question")

      const wrong = yield* request(`${base}/questions/${pending!.id}`, { method: "POST", headers: json, body: "{\"choices\":[0,1]}" })
      expect(wrong.status).toBe(400)
      expect(wrong.text).toContain("one option")
      const outside = yield* request(`${base}/questions/${pending!.id}`, { method: "POST", headers: json, body: "{\"choices\":[7]}" })
      expect(outside.status).toBe(400)
      const words = yield* request(`${base}/questions/${pending!.id}`, { method: "POST", headers: json, body: "{\"text\":\"prod\"}" })
      expect(words.status).toBe(400)

      const answer = yield* request(`${base}/questions/${pending!.id}`, { method: "POST", headers: json, body: "{\"choices\":[1]}" })
      expect(answer.status).toBe(200)
      expect(answer.json).toMatchObject({ id: pending!.id, outcome: "answered", choices: ["staging"], by: "operator" })
      const [, second] = yield* model.awaitRequests(2)
      expect(Object.values(toolResultsById(second!.body)).join("\n")).toContain("answer from operator: chose \"staging\"")
      const again = yield* request(`${base}/questions/${pending!.id}`, { method: "POST", headers: json, body: "{\"choices\":[0]}" })
      expect(again.status).toBe(404)
      expect(yield* awaitQuestions(base, 0)).toEqual([])
    })))

  it.live("several choices and the person's own words, where the question allows them", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, model } = yield* startShowing({ config: { recall: false } })
      yield* model.reply(askCall({ ...deploy, multiSelect: true, allowText: true }), FakeReply.text("ok"))
      yield* send(base, { text: "deploy" })
      const [pending] = yield* awaitQuestions(base, 1)
      const answer = yield* request(`${base}/questions/${pending!.id}`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ choices: [2, 0], text: "and tag it" })
      })
      expect(answer.json).toMatchObject({ choices: ["main", "dev"], text: "and tag it" })
      const [, second] = yield* model.awaitRequests(2)
      expect(Object.values(toolResultsById(second!.body)).join("\n")).toContain("chose \"main\", \"dev\"; wrote \"and tag it\"")
    })))

  it.live("unanswered after askTimeout, the model reads \"no answer\" and the turn goes on", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, model } = yield* startShowing({ config: { recall: false, askTimeout: 1 } })
      yield* model.reply(askCall({ question: "Anything else?" }), FakeReply.text("going on"))
      yield* send(base, { text: "do it" })
      const [, second] = yield* model.awaitRequests(2)
      expect(Object.values(toolResultsById(second!.body)).join("\n")).toContain("no answer: nobody answered within 1 s")
      expect(yield* awaitQuestions(base, 0)).toEqual([])
    })))

  it.live("a stopped turn ends the wait: nothing is left pending", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, model } = yield* startShowing({ config: { recall: false } })
      yield* model.reply(askCall(deploy), FakeReply.text("never read"))
      const turnId = yield* send(base, { text: "deploy" })
      const [pending] = yield* awaitQuestions(base, 1)
      const stop = yield* request(`${base}/turns/${turnId}/stop`, { method: "POST", headers: bearer })
      expect(stop.status).toBe(200)
      expect(yield* awaitQuestions(base, 0)).toEqual([])
      const late = yield* request(`${base}/questions/${pending!.id}`, { method: "POST", headers: json, body: "{\"choices\":[0]}" })
      expect(late.status).toBe(404)
    })))

  it.live("not offered to a turn no surface shows questions to: an API client's own interface, the web UI's for now", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, model, context } = yield* startServer({ config: { recall: false } })
      yield* model.reply(FakeReply.text("hi"), FakeReply.text("hi"), FakeReply.text("hi"))
      yield* send(base, { text: "hello", interface: "my-app", channel: "x" })
      const [first] = yield* model.awaitRequests(1)
      expect(offeredTools(first!.body)).not.toContain("ask_user_question")
      yield* send(base, { text: "hello" })
      const [, second] = yield* model.awaitRequests(2)
      expect(offeredTools(second!.body)).not.toContain("ask_user_question")
      // Once something shows web turns' questions, they are offered it.
      yield* Context.get(context, Questions).showOn("web")
      yield* send(base, { text: "hello" })
      const [, , third] = yield* model.awaitRequests(3)
      expect(offeredTools(third!.body)).toContain("ask_user_question")
    })))

  it.live("a terminal attached over HTTP (kern tui) shows its turns' questions: asked while its stream is open, not after", () =>
    Effect.gen(function*() {
      const { base, model, client, context } = yield* startServer({ config: { recall: false } })
      yield* model.reply(FakeReply.text("hi"), askCall(deploy), FakeReply.text("deploying staging"), FakeReply.text("hi"))
      const terminal = { interface: "terminal", channel: "terminal" }
      yield* send(base, { text: "hello", ...terminal })
      const [first] = yield* model.awaitRequests(1)
      expect(offeredTools(first!.body)).not.toContain("ask_user_question")
      // Attached: its event stream says it shows the terminal's questions, as remoteTerminal.ts opens it.
      yield* Effect.scoped(Effect.gen(function*() {
        yield* client.events(Option.none(), "terminal")
        yield* send(base, { text: "deploy it", ...terminal })
        const [pending] = yield* awaitQuestions(base, 1)
        expect(pending).toMatchObject({ question: deploy.question, interface: "terminal" })
        const [, second] = yield* model.awaitRequests(2)
        expect(offeredTools(second!.body)).toContain("ask_user_question")
        yield* client.answer(pending!.id, { choices: [1] })
        const [, , third] = yield* model.awaitRequests(3)
        expect(Object.values(toolResultsById(third!.body)).join("\n")).toContain("chose \"staging\"")
      }))
      // Detached: once the agent has seen the stream close, nothing shows the terminal's questions.
      yield* Context.get(context, Questions).surfaces.pipe(
        Effect.filterOrFail((surfaces) => !surfaces.has("terminal")),
        Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("20 seconds")))
      )
      yield* send(base, { text: "again", ...terminal })
      const [, , , fourth] = yield* model.awaitRequests(4)
      expect(offeredTools(fourth!.body)).not.toContain("ask_user_question")
    }).pipe(Effect.scoped))
})
