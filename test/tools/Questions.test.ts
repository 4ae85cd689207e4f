import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, PubSub, Queue, TestClock } from "effect"
import { channelUser, localOperator } from "../../src/kernel/pendingAnswers.js"
import { isAskedOf, layerWith, Questions } from "../../src/tools/Questions.js"

const telegramTurn = { interface: "telegram", channel: "-1001", userId: "42" }
const slackTurn = { interface: "slack", channel: "C1:1700000000.1", userId: "U1" }
const terminalTurn = { interface: "terminal", channel: "terminal", userId: "operator" }

describe("who may answer a question", () => {
  it("only the person the turn serves: every other answerer is refused", () => {
    expect(isAskedOf(telegramTurn, channelUser("telegram", "42"))).toBe(true)
    expect(isAskedOf(slackTurn, channelUser("slack", "U1"))).toBe(true)
    expect(isAskedOf(terminalTurn, localOperator("terminal"))).toBe(true)
    const refused: ReadonlyArray<readonly [typeof telegramTurn, ReturnType<typeof localOperator>]> = [
      // a friend in the same group, the same id on another channel, near misses of the id
      [telegramTurn, channelUser("telegram", "43")],
      [telegramTurn, channelUser("slack", "42")],
      [telegramTurn, channelUser("telegram", "042")],
      [telegramTurn, channelUser("telegram", "42 ")],
      [telegramTurn, channelUser("telegram", "")],
      [telegramTurn, channelUser("telegram", "-1001")],
      [telegramTurn, channelUser("Telegram", "42")],
      // the local operator (web UI, HTTP API, terminal) is not the chat user
      [telegramTurn, localOperator("http")],
      [telegramTurn, localOperator("terminal")],
      [slackTurn, localOperator("http")],
      [slackTurn, channelUser("slack", "U2")],
      [slackTurn, channelUser("slack", "u1")],
      [slackTurn, channelUser("telegram", "U1")],
      // a chat user cannot answer the operator's own turns
      [terminalTurn, channelUser("telegram", "operator")],
      [terminalTurn, channelUser("slack", "operator")],
      [terminalTurn, channelUser("terminal", "operator")]
    ]
    for (const [origin, by] of refused) expect(isAskedOf(origin, by), JSON.stringify({ origin, by })).toBe(false)
  })
})

const asking = Effect.gen(function*() {
  const questions = yield* Questions
  yield* questions.showOn("terminal")
  const requests = yield* PubSub.subscribe(questions.requests)
  const fiber = yield* Effect.fork(questions.ask({
    question: "Which?",
    options: ["a", "b"],
    multiSelect: false,
    allowText: false,
    origin: terminalTurn,
    runId: "run_1",
    sessionId: "s"
  }))
  const pending = yield* Queue.take(requests)
  return { questions, fiber, pending }
})

describe("Questions", () => {
  it.scoped("unanswered for askTimeout, the question ends as a timeout and nothing is left pending (TestClock)", () =>
    Effect.gen(function*() {
      const { questions, fiber, pending } = yield* asking
      expect(pending.expiresAtMs - pending.requestedAtMs).toBe(120_000)
      yield* TestClock.adjust("119 seconds")
      expect((yield* questions.pending).map((q) => q.id)).toEqual([pending.id])
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(fiber)).toMatchObject({ outcome: "timeout", by: "timeout", choices: [] })
      expect(yield* questions.pending).toEqual([])
    }).pipe(Effect.provide(layerWith(120))))

  it.scoped("a wrong person's answer is refused and the question still waits; the turn's interruption ends it", () =>
    Effect.gen(function*() {
      const { questions, fiber, pending } = yield* asking
      const refused = yield* Effect.flip(questions.answer(pending.id, { choices: [0] }, channelUser("telegram", "42")))
      expect(refused.reason).toBe("not_yours")
      expect((yield* questions.pending).map((q) => q.id)).toEqual([pending.id])
      const ended = yield* PubSub.subscribe(questions.resolved)
      yield* Fiber.interrupt(fiber)
      expect(yield* Queue.take(ended)).toMatchObject({ id: pending.id, outcome: "stopped" })
      expect(yield* questions.pending).toEqual([])
    }).pipe(Effect.provide(layerWith(120))))

  it.scoped("a turn no surface shows questions to is answered at once: no answer", () =>
    Effect.gen(function*() {
      const questions = yield* Questions
      const answer = yield* questions.ask({
        question: "Which?",
        options: [],
        multiSelect: false,
        allowText: true,
        origin: { interface: "heartbeat", channel: "heartbeat", userId: "heartbeat" },
        runId: "run_1",
        sessionId: "s"
      })
      expect(answer).toMatchObject({ outcome: "timeout", by: "no surface" })
    }).pipe(Effect.provide(layerWith(120))))
})
