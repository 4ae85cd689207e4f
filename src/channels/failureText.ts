import { operatorUserId, type QueuedMessage } from "../turn/MessageQueue.js"
import type { TurnFailure } from "../turn/TurnFailure.js"

/** What a person who is not the operator reads when their turn failed: no configuration, key name, file or path. */
export const apology = "Sorry, I could not answer that: something went wrong on my side. The operator has the details."

/** What they read when their message could not be recorded for want of disk space: what to do, still no path. */
export const diskFullApology = "Sorry, I could not take that message: my disk is full. Please send it again later."

/**
 * What a person who is not the operator reads when a daily spend cap stopped their turn: which cap (theirs, their
 * channel's or the whole agent's) and when it frees up, without its figures.
 */
export const budgetApology = (cap: "perDay" | "perUser" | "perChannel"): string =>
  `Sorry, I cannot answer that today: ${
    cap === "perUser" ? "you have reached your daily limit" : cap === "perChannel" ? "this chat has reached its daily limit" : "I have reached my daily limit"
  } for model use. Please try again tomorrow.`

/** What a chat shows where a stopped turn's reply would have gone (`/stop`, or the operator's Stop). */
export const stoppedText = "Stopped."

/**
 * The text a chat shows for a failed turn: the failure itself for the operator, a short apology for anyone else
 * (a paired Telegram or Slack user must not learn `check FAKE_KEY in .kern/.env`), which says when the disk is full
 * (the message was not taken; sending it again later works). The operator sees the detail in the terminal, the web
 * UI and the log.
 */
export const failureTextFor = (
  message: Pick<QueuedMessage, "userId">,
  detail: string,
  failure?: typeof TurnFailure.Encoded
): string =>
  message.userId === operatorUserId
    ? detail
    : failure?._tag === "Stopped"
    ? stoppedText
    : failure?._tag === "BudgetExceeded"
    ? budgetApology(failure.cap)
    : failure?._tag === "SessionNotWritten" && failure.reason === "disk-full"
    ? diskFullApology
    : apology
