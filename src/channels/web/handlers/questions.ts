import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { localOperator } from "../../../kernel/pendingAnswers.js"
import { Questions } from "../../../tools/Questions.js"
import { questionAnswerInfo, questionInfo } from "../../questionInfo.js"
import { QuestionAnswerRequest } from "../api.js"
import { badRequest, Forbidden, NotFound } from "../ApiError.js"
import { KernApi } from "../KernApi.js"
import { readBody } from "../readBody.js"
import { ServerInfo } from "../ServerInfo.js"

/** The questions turns wait on, and the operator's answer to one of a local turn's. */
export const layer = HttpApiBuilder.group(KernApi, "questions", (handlers) =>
  Effect.gen(function*() {
    const questions = yield* Questions
    const server = yield* ServerInfo
    return handlers
      .handle("list", () => Effect.map(questions.pending, (pending) => ({ questions: pending.map(questionInfo) })))
      // Raw: the body is read here, counted against the cap and checked for depth before it is parsed.
      .handleRaw("answer", ({ path, request }) =>
        Effect.gen(function*() {
          const body = yield* readBody(request, QuestionAnswerRequest, server.bodyLimitBytes)
          const reply = { choices: body.choices ?? [], ...(body.text === undefined ? {} : { text: body.text }) }
          const answer = yield* questions.answer(path.id, reply, localOperator("http")).pipe(
            Effect.mapError((error) =>
              error.reason === "unknown_id"
                ? new NotFound({ error: error.message })
                : error.reason === "not_yours"
                ? new Forbidden({ error: error.message })
                : badRequest("choices", error.message)
            )
          )
          return questionAnswerInfo(answer)
        }))
  }))
