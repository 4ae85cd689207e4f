import { envelopedText } from "../session/envelope.js"
import { type SessionMessage, valueText } from "../session/messages.js"
import { failedTurnNote } from "./failedTurnNote.js"
import { attachmentsText } from "../media/attachmentText.js"

/** Tokens a message costs on the wire beyond its text (role, separators): providers add about this many. */
export const messageOverheadTokens = 4

/** The reference the output compactor writes (src/tools/OutputCompactor.ts): the artifact id in group 1. */
export const artifactReference = /artifact (art_[0-9a-f]{24}): retrieve_tool_output/

/**
 * A tool result as the context carries it: whole up to `maxChars`, else its head and a note of how to get the rest.
 * The session keeps the result as it was; only the model's copy is cut. The note names the artifact when the
 * compactor stored one, else the recall tool's load of that very message.
 */
export const toolResultInContext = (
  result: unknown,
  maxChars: number,
  where: { readonly sessionId: string; readonly index: number }
): unknown => {
  if (typeof result !== "string") {
    const json = valueText(result)
    return json.length <= maxChars ? result : toolResultInContext(json, maxChars, where)
  }
  if (result.length <= maxChars) return result
  const artifact = artifactReference.exec(result)?.[1]
  const how = artifact !== undefined
    ? `retrieve_tool_output({ "artifactId": "${artifact}" })`
    : `recall({ "mode": "load", "sessionId": "${where.sessionId}", "messageStart": ${where.index}, "messageEnd": ${where.index} })`
  return `${result.slice(0, maxChars)}\n[cut from the context: ${result.length - maxChars} more characters; the whole output: ${how}]`
}

/** The text of a message as the model reads it (what its tokens are counted from). */
export const sentText = (message: SessionMessage, maxToolResultChars: number, sessionId = "", index = 0): string => {
  switch (message._tag) {
    case "user": {
      const text = envelopedText(message.envelope, message.text)
      const attachments = message.attachments ?? []
      // An image's own price is added where the text is counted (SessionHistory, imageTokens.ts).
      return attachments.length === 0 ? text : [...attachmentsText(attachments), text].join("\n")
    }
    case "assistant": {
      if (message.toolCalls.length === 0) return message.text
      const calls = message.toolCalls.map((call) => `${call.name} ${valueText(call.params)}`)
      return message.text === "" ? calls.join("\n") : `${message.text}\n${calls.join("\n")}`
    }
    case "tool":
      return valueText(toolResultInContext(message.result, maxToolResultChars, { sessionId, index }))
    case "turn-failed":
      return failedTurnNote(message)
  }
}
