import { Either, Schema } from "effect"
import {
  type AssistantMessage,
  SessionHeader,
  SessionLine,
  type SessionMessage,
  ToolResultMessage
} from "./messages.js"

export interface ParsedSession {
  readonly header: SessionHeader
  /** The messages in model order: each assistant message is followed by the results of its tool calls. */
  readonly messages: ReadonlyArray<SessionMessage>
  /** Results made up for tool calls that never finished (the process stopped mid-call). */
  readonly synthesized: ReadonlyArray<ToolResultMessage>
  /** Bytes of the file that hold whole lines; anything after is a torn write. */
  readonly validBytes: number
  readonly tornBytes: number
  /** The last line is whole but its newline was never written: add one before appending. */
  readonly missingNewline: boolean
  /** What was wrong and has been worked around, in words for the operator. */
  readonly problems: ReadonlyArray<string>
}

export const interruptedResult = "interrupted: the runtime stopped before this tool call finished"

const decodeLine = Schema.decodeUnknownEither(Schema.parseJson(SessionLine))

/**
 * Reads a session file's text. A torn trailing line (a write cut short) is dropped; an unreadable line in the middle
 * is skipped; tool calls without results get a synthetic "interrupted" result. Nothing readable is lost.
 */
export const parseSession = (text: string, name: string): Either.Either<ParsedSession, string> => {
  const problems: Array<string> = []
  const lines: Array<SessionLine> = []
  let offset = 0
  let validBytes = 0
  let lineNumber = 0
  let missingNewline = false
  while (offset < text.length) {
    const newline = text.indexOf("\n", offset)
    const complete = newline !== -1
    const raw = text.slice(offset, complete ? newline : text.length)
    lineNumber++
    const decoded = raw.trim() === "" ? undefined : decodeLine(raw)
    if (decoded !== undefined && Either.isRight(decoded)) {
      lines.push(decoded.right)
      validBytes = Buffer.byteLength(text.slice(0, complete ? newline + 1 : text.length))
      missingNewline = !complete
    } else if (decoded !== undefined && !complete) {
      problems.push(`${name}: dropped a torn last line (${Buffer.byteLength(raw)} bytes of an unfinished write)`)
    } else if (decoded !== undefined) {
      problems.push(`${name}: line ${lineNumber} could not be read and was skipped`)
      validBytes = Buffer.byteLength(text.slice(0, newline + 1))
    } else if (complete) {
      validBytes = Buffer.byteLength(text.slice(0, newline + 1))
    }
    offset = complete ? newline + 1 : text.length
  }
  const totalBytes = Buffer.byteLength(text)
  const [first, ...rest] = lines
  if (first === undefined || !(first instanceof SessionHeader)) {
    return Either.left(`${name} is not a kern session (no session header on its first line)`)
  }
  const messages = rest.filter((line): line is SessionMessage => !(line instanceof SessionHeader))
  const { ordered, synthesized } = pairToolResults(messages)
  if (synthesized.length > 0) {
    problems.push(`${name}: ${synthesized.length} tool call(s) never finished; recorded as interrupted`)
  }
  return Either.right({
    header: first,
    messages: ordered,
    synthesized,
    validBytes,
    tornBytes: totalBytes - validBytes,
    missingNewline,
    problems
  })
}

/** Puts each tool result right after the assistant message that called it, inventing "interrupted" ones. */
const pairToolResults = (messages: ReadonlyArray<SessionMessage>) => {
  const results = new Map<string, ToolResultMessage>()
  for (const message of messages) if (message._tag === "tool") results.set(message.toolCallId, message)
  const used = new Set<string>()
  const ordered: Array<SessionMessage> = []
  const synthesized: Array<ToolResultMessage> = []
  for (const message of messages) {
    if (message._tag === "tool") {
      if (!used.has(message.toolCallId)) {
        // A result whose call is unknown: keep it where it is rather than lose it.
        used.add(message.toolCallId)
        ordered.push(message)
      }
      continue
    }
    ordered.push(message)
    if (message._tag !== "assistant") continue
    for (const call of (message as AssistantMessage).toolCalls) {
      const result = results.get(call.id)
      used.add(call.id)
      if (result !== undefined) {
        ordered.push(result)
      } else {
        const synthetic = new ToolResultMessage({
          toolCallId: call.id,
          toolName: call.name,
          isError: true,
          result: interruptedResult,
          at: message.at
        })
        synthesized.push(synthetic)
        ordered.push(synthetic)
      }
    }
  }
  return { ordered, synthesized }
}
