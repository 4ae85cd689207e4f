import type { KnownSecret } from "../config/KnownSecrets.js"
import { redactSecrets, redactSecretsInText } from "../kernel/secretGuard.js"
import { AssistantMessage, Attachment, type SessionMessage, ToolResultMessage, TurnFailedMessage, UserMessage } from "./messages.js"

// The fields are already of their types: redacting a string keeps it one.
const checked = true

/** An attachment whose extracted text (a PDF's, a transcript) and name hold no known secret. */
const redactAttachment = (attachment: Attachment, secrets: ReadonlyArray<KnownSecret>): Attachment => {
  const name = redactSecretsInText(attachment.name, secrets)
  const text = attachment.text === undefined ? undefined : redactSecretsInText(attachment.text, secrets)
  return name === attachment.name && text === attachment.text
    ? attachment
    : new Attachment({ ...attachment, name, ...(text === undefined ? {} : { text }) }, checked)
}

/**
 * A session message with every known secret replaced by `[redacted:NAME]`, whoever wrote it: the user's text and
 * what was read out of its files, the model's reply and its tool calls' arguments, a tool's result. The same message when it held none.
 */
export const redactMessage = (message: SessionMessage, secrets: ReadonlyArray<KnownSecret>): SessionMessage => {
  if (secrets.length === 0) return message
  if (message instanceof UserMessage) {
    const text = redactSecretsInText(message.text, secrets)
    const attachments = message.attachments?.map((attachment) => redactAttachment(attachment, secrets))
    const same = text === message.text && (attachments ?? []).every((a, i) => a === message.attachments?.[i])
    return same ? message : new UserMessage({ ...message, text, ...(attachments === undefined ? {} : { attachments }) }, checked)
  }
  if (message instanceof AssistantMessage) {
    const text = redactSecretsInText(message.text, secrets)
    const toolCalls = redactSecrets(message.toolCalls, secrets)
    return text === message.text && toolCalls === message.toolCalls
      ? message
      : new AssistantMessage({ ...message, text, toolCalls }, checked)
  }
  if (message instanceof ToolResultMessage) {
    const result = redactSecrets(message.result, secrets)
    return result === message.result ? message : new ToolResultMessage({ ...message, result }, checked)
  }
  if (message instanceof TurnFailedMessage) {
    // A provider's error text may quote what it was sent.
    const text = redactSecretsInText(message.message, secrets)
    return text === message.message ? message : new TurnFailedMessage({ ...message, message: text }, checked)
  }
  return message
}
