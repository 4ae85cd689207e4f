import { operatorUserId, type QueuedMessage } from "../agent/MessageQueue.js"

/** What a person who is not the operator reads when their turn failed: no configuration, key name, file or path. */
export const apology = "Sorry, I could not answer that: something went wrong on my side. The operator has the details."

/**
 * The text a chat shows for a failed turn: the failure itself for the operator, a short apology for anyone else
 * (a paired Telegram or Slack user must not learn `check FAKE_KEY in .kern/.env`). The operator sees the detail in
 * the terminal, the web UI and the log.
 */
export const failureTextFor = (message: Pick<QueuedMessage, "userId">, detail: string): string =>
  message.userId === operatorUserId ? detail : apology
