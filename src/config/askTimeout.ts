import { Schema } from "effect"

/** The longest a question may wait (seconds): a turn holds its conversation while it waits. */
export const maxAskTimeoutSeconds = 3600

/** `askTimeout`: seconds ask_user_question waits for an answer before the turn goes on without one. */
export const AskTimeout = Schema.Int.pipe(Schema.between(1, maxAskTimeoutSeconds)).annotations({
  identifier: `an integer from 1 to ${maxAskTimeoutSeconds}`
})

export const askTimeoutExpectation =
  `an integer from 1 to ${maxAskTimeoutSeconds} (seconds ask_user_question waits for an answer before the turn goes on)`
