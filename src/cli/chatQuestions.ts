import { Console, Effect, PubSub, Stream } from "effect"
import * as NodeReadline from "node:readline"
import { questionInfo } from "../channels/questionInfo.js"
import { formatQuestion, parseQuestionAnswer } from "../channels/questionPrompt.js"
import { neutralizeControls } from "../channels/terminalSafe.js"
import { AgentConfig } from "../config/AgentConfig.js"
import { localOperator } from "../kernel/pendingAnswers.js"
import { agentZone, localIso } from "../session/envelope.js"
import { type PendingQuestion, Questions } from "../tools/Questions.js"
import { onTerminal, write } from "./chatRemote.js"

/** `kern chat`'s own turns (interface `cli`) ask their questions inline. */
const chatInterface = "cli"

/**
 * Reads answers on the terminal (stdin, prompts on stderr) until one is taken; one the question does not take says
 * why and asks again. Ends when the question ends otherwise (its scope closes the readline interface).
 */
const answerInline = (questions: Questions["Type"], pending: PendingQuestion) =>
  Effect.scoped(Effect.gen(function*() {
    const rl = yield* Effect.acquireRelease(
      Effect.sync(() => NodeReadline.createInterface({ input: process.stdin, output: process.stderr, terminal: true })),
      (rl) => Effect.sync(() => rl.close())
    )
    const line = Effect.async<string>((resume) => {
      rl.question("your answer: ", (typed) => resume(Effect.succeed(typed)))
    })
    const attempt = Effect.flatMap(line, (typed) =>
      questions.answer(pending.id, parseQuestionAnswer(typed, pending), localOperator("cli")).pipe(
        Effect.as(true),
        Effect.catchTag("QuestionError", (error) =>
          error.reason === "invalid_answer"
            ? Effect.as(Console.error(`kern: ${error.message}`), false)
            : Effect.as(Console.error(`kern: ${error.message}`), true))
      ))
    yield* Effect.repeat(attempt, { until: (done) => done })
  }))

/**
 * On a terminal, the questions the turn in this process asks are shown on stderr, numbered, and answered inline; the
 * tool is offered to `kern chat` turns only then (piped, nobody could answer). Subscribed in the caller's scope.
 */
export const followLocalQuestions = Effect.gen(function*() {
  if (!onTerminal()) return
  const questions = yield* Questions
  const { config } = yield* AgentConfig
  const zone = agentZone(config.timezone)
  const asked = yield* PubSub.subscribe(questions.requests)
  yield* questions.showOn(chatInterface)
  yield* Effect.forkScoped(Stream.fromQueue(asked).pipe(Stream.runForEach((pending) =>
    pending.origin.interface !== chatInterface
      ? Effect.void
      : Effect.zipRight(
        write(process.stderr, neutralizeControls(formatQuestion(questionInfo(pending), localIso(pending.expiresAtMs, zone).slice(11, 19)))),
        answerInline(questions, pending)
      )
  )))
})
