import { Prompt } from "@effect/ai"
import type { SessionMessage } from "../session/messages.js"
import { envelopeLine } from "./envelope.js"

// One frozen empty options object for every part and message kern makes: nothing writes to it, and a fresh one per
// part would be 2 allocations per message of a history that is built once per load.
const noOptions: Prompt.ProviderOptions = Object.freeze({})

const userMessage = (text: string): Prompt.Message =>
  Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text, options: noOptions })], options: noOptions })

/** The system prompt as a prompt message. */
export const systemMessage = (content: string): Prompt.Message =>
  Prompt.makeMessage("system", { content, options: noOptions })

/**
 * Appends one session message to a prompt, as @effect/ai's decoded `Prompt.Message` values: passed inside a
 * `Prompt`, they reach the provider with no second decode. Results of one step travel together in one tool message,
 * so a result extends the tool message before it (a copy of that step's results, never of the history).
 */
export const appendPromptMessage = (out: Array<Prompt.Message>, message: SessionMessage): void => {
  switch (message._tag) {
    case "user": {
      const envelope = message.envelope === undefined ? "" : `${envelopeLine(message.envelope)}\n`
      out.push(userMessage(`${envelope}${message.text}`))
      return
    }
    case "assistant": {
      const parts: Array<Prompt.AssistantMessagePart> = []
      if (message.text !== "") parts.push(Prompt.makePart("text", { text: message.text, options: noOptions }))
      for (const call of message.toolCalls) {
        parts.push(Prompt.makePart("tool-call", {
          id: call.id,
          name: call.name,
          params: call.params,
          providerExecuted: false,
          options: noOptions
        }))
      }
      if (parts.length > 0) out.push(Prompt.makeMessage("assistant", { content: parts, options: noOptions }))
      return
    }
    case "tool": {
      const part = Prompt.makePart("tool-result", {
        id: message.toolCallId,
        name: message.toolName,
        isFailure: message.isError,
        result: message.result,
        providerExecuted: false,
        options: noOptions
      })
      const last = out[out.length - 1]
      if (last !== undefined && last.role === "tool") {
        out[out.length - 1] = Prompt.makeMessage("tool", { content: [...last.content, part], options: noOptions })
      } else {
        out.push(Prompt.makeMessage("tool", { content: [part], options: noOptions }))
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
