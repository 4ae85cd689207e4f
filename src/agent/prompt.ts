import type { Prompt } from "@effect/ai"
import { envelopeLine } from "./envelope.js"
import type { SessionMessage } from "../session/messages.js"

/** The session's messages as @effect/ai prompt messages, the system prompt first. */
export const toPromptMessages = (
  system: string,
  messages: ReadonlyArray<SessionMessage>
): Array<Prompt.MessageEncoded> => {
  const out: Array<Prompt.MessageEncoded> = [{ role: "system", content: system }]
  for (const message of messages) {
    switch (message._tag) {
      case "user": {
        const envelope = message.envelope === undefined ? "" : `${envelopeLine(message.envelope)}\n`
        out.push({ role: "user", content: `${envelope}${message.text}` })
        break
      }
      case "assistant": {
        const parts: Array<Prompt.AssistantMessagePartEncoded> = []
        if (message.text !== "") parts.push({ type: "text", text: message.text })
        for (const call of message.toolCalls) {
          parts.push({ type: "tool-call", id: call.id, name: call.name, params: call.params, providerExecuted: false })
        }
        if (parts.length > 0) out.push({ role: "assistant", content: parts })
        break
      }
      case "tool": {
        const part: Prompt.ToolResultPartEncoded = {
          type: "tool-result",
          id: message.toolCallId,
          name: message.toolName,
          isFailure: message.isError,
          result: message.result,
          providerExecuted: false
        }
        // Results of one step travel together in one tool message.
        const last = out[out.length - 1]
        if (last !== undefined && last.role === "tool") {
          out[out.length - 1] = { role: "tool", content: [...last.content, part] }
        } else {
          out.push({ role: "tool", content: [part] })
        }
        break
      }
    }
  }
  return out
}
