import type { TurnFailedMessage } from "../session/messages.js"

/**
 * What the model is sent for a turn that ended without its answer (a `turn-failed` entry of the session): a short
 * note in the assistant's place, after the user's message and whatever the turn said before it ended. The message
 * stays in the history (it is part of the conversation), but the model reads that it was already dealt with, so it
 * does not answer it again as if it were new on every later turn; the user can still ask for it again.
 */
export const failedTurnNote = (entry: TurnFailedMessage): string =>
  `[kern: this turn ended without an answer: ${entry.message} (${entry.failure}). The message above was not ` +
  "answered; do not answer it now as if it were new, unless the user asks for it again.]"
