import { Prompt } from "@effect/ai"
import type { SessionMessage } from "../session/messages.js"
import { envelopedText } from "../session/envelope.js"
import { failedTurnNote } from "./failedTurnNote.js"
import { attachmentsText } from "../media/attachmentText.js"
import { carrying } from "../media/promptAttachments.js"
import type { Attachment } from "../session/messages.js"

// One frozen empty options object for every part and message kern makes: nothing writes to it.
const noOptions: Prompt.ProviderOptions = Object.freeze({})

// Parts and messages are written as literals of one fixed shape each, the same values Prompt.makePart and
// Prompt.makeMessage return: those spread their arguments into a new object, which costs ~4 µs a part, and a
// history is converted whole on every load (75,000 messages: seconds).

const textPart = (text: string): Prompt.TextPart => ({ [Prompt.PartTypeId]: Prompt.PartTypeId, type: "text", text, options: noOptions })

/** The system prompt as a prompt message. */
export const systemMessage = (content: string): Prompt.SystemMessage => ({
  [Prompt.MessageTypeId]: Prompt.MessageTypeId,
  role: "system",
  content,
  options: noOptions
})

const userMessage = (text: string): Prompt.UserMessage => ({
  [Prompt.MessageTypeId]: Prompt.MessageTypeId,
  role: "user",
  content: [textPart(text)],
  options: noOptions
})

/**
 * A message with files: each file's text form (attachmentText.ts) before the message's text, as Anthropic advises
 * (images before the question), the files themselves carried for the turn to swap in what its model is sent.
 */
const attachedUserMessage = (text: string, attachments: ReadonlyArray<Attachment>): Prompt.UserMessage => ({
  [Prompt.MessageTypeId]: Prompt.MessageTypeId,
  role: "user",
  content: [...attachmentsText(attachments).map(textPart), textPart(text)],
  options: carrying(attachments)
})

const toolMessage = (content: ReadonlyArray<Prompt.ToolResultPart>): Prompt.ToolMessage => ({
  [Prompt.MessageTypeId]: Prompt.MessageTypeId,
  role: "tool",
  content,
  options: noOptions
})

/**
 * Appends one session message to a prompt, as @effect/ai's decoded `Prompt.Message` values: passed inside a
 * `Prompt`, they reach the provider with no second decode. Results of one step travel together in one tool message,
 * so a result extends the tool message before it (a copy of that step's results, never of the history).
 */
export const appendPromptMessage = (
  out: Array<Prompt.Message>,
  message: SessionMessage,
  /** What the context carries of a tool result (cut to maxToolResultChars); the whole result by default. */
  resultInContext: (result: unknown) => unknown = (result) => result
): void => {
  switch (message._tag) {
    case "user": {
      const text = envelopedText(message.envelope, message.text)
      const attachments = message.attachments ?? []
      out.push(attachments.length === 0 ? userMessage(text) : attachedUserMessage(text, attachments))
      return
    }
    case "assistant": {
      const parts: Array<Prompt.AssistantMessagePart> = []
      if (message.text !== "") parts.push(textPart(message.text))
      for (const call of message.toolCalls) {
        parts.push({
          [Prompt.PartTypeId]: Prompt.PartTypeId,
          type: "tool-call",
          id: call.id,
          name: call.name,
          params: call.params,
          providerExecuted: false,
          options: noOptions
        })
      }
      if (parts.length > 0) {
        out.push({ [Prompt.MessageTypeId]: Prompt.MessageTypeId, role: "assistant", content: parts, options: noOptions })
      }
      return
    }
    case "tool": {
      const part: Prompt.ToolResultPart = {
        [Prompt.PartTypeId]: Prompt.PartTypeId,
        type: "tool-result",
        id: message.toolCallId,
        name: message.toolName,
        isFailure: message.isError,
        result: resultInContext(message.result),
        providerExecuted: false,
        options: noOptions
      }
      const last = out[out.length - 1]
      if (last !== undefined && last.role === "tool") out[out.length - 1] = toolMessage([...last.content, part])
      else out.push(toolMessage([part]))
      return
    }
    case "turn-failed": {
      // In the assistant's place; after what the turn said before it ended, in the same message.
      const note = textPart(failedTurnNote(message))
      const last = out[out.length - 1]
      if (last !== undefined && last.role === "assistant") {
        out[out.length - 1] = { ...last, content: [...last.content, note] }
      } else {
        out.push({ [Prompt.MessageTypeId]: Prompt.MessageTypeId, role: "assistant", content: [note], options: noOptions })
      }
      return
    }
  }
}

/** The session's messages as a prompt, the system prompt first (a fresh array; the turn keeps one in SessionHistory). */
export const toPromptMessages = (system: string, messages: ReadonlyArray<SessionMessage>): Array<Prompt.Message> => {
  const out: Array<Prompt.Message> = [systemMessage(system)]
  for (const message of messages) appendPromptMessage(out, message)
  return out
}
