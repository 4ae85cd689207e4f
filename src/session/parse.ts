import { Either } from "effect"
import * as NodeBuffer from "node:buffer"
import { type DecodedLine, decodeKnownValue, decodeSessionLine, decodeSlow, parseSessionLines } from "./lineDecode.js"
import { type AssistantMessage, SessionHeader, type SessionMessage, ToolResultMessage } from "./messages.js"

export interface ParsedSession {
  readonly header: SessionHeader
  /** The messages in model order: each assistant message is followed by the results of its tool calls. */
  readonly messages: ReadonlyArray<SessionMessage>
  /** Results made up for tool calls that never finished (the process stopped mid-call). */
  readonly synthesized: ReadonlyArray<ToolResultMessage>
  /** Message lines in the file (the header, skipped lines and synthesized results not counted). */
  readonly messageLines: number
  /** Bytes of the file that hold whole lines; anything after is a torn write. */
  readonly validBytes: number
  readonly tornBytes: number
  /** The last line is whole but its newline was never written: add one before appending. */
  readonly missingNewline: boolean
  /** What was wrong and has been worked around, in words for the operator. */
  readonly problems: ReadonlyArray<string>
  /** Index in the whole session of `messages[0]`: 0, or the context cut the file was read from. */
  readonly firstIndex: number
  /**
   * Where each user message's line is in the file (the context cuts only before user messages). A Map, not a
   * WeakMap: the session's messages are held as long as it is, and a WeakMap of 75,000 keys cost a load a fifth of
   * its time (each set, and the collector's pass over the ephemerons).
   */
  readonly positions: ReadonlyMap<SessionMessage, LinePosition>
}

/** Where a message's line starts in its session file, and how many message lines come before it. */
export interface LinePosition {
  readonly byteOffset: number
  readonly linesBefore: number
}

/**
 * Where to start reading a session that is only needed from its context cut on: the cut's byte offset, the message
 * lines before it and its index, and the header read from the file's first line.
 */
export interface ParseFrom {
  readonly header: SessionHeader
  readonly byteOffset: number
  readonly linesBefore: number
  readonly messageIndex: number
}

/** A file that holds no session: `empty` when it has no line at all (only a torn write, or nothing). */
export interface NotASession {
  readonly message: string
  readonly empty: boolean
}

export const interruptedResult = "interrupted: the runtime stopped before this tool call finished"

const newline = 0x0a

/** What was wrong with a line that did not decode, when the decoder could say: ` (nested more than 200 levels deep …)`. */
const reasonOf = (decoded: DecodedLine): string => (decoded._tag === "TooDeep" ? ` (${decoded.reason})` : "")

const isAscii = (bytes: Buffer): boolean => NodeBuffer.isAscii(bytes)



/**
 * Reads a session file a chunk at a time, in one pass: byte offsets are counted as lines go by, so the cost is
 * linear in the file, and the reader can give the runtime a turn between chunks (a SIGTERM during a long load is
 * served at once). A torn trailing line (a write cut short: not JSON) is dropped; a complete last line that does not
 * decode (a newer kern's line) is kept on disk and skipped; an unreadable line in the middle is skipped; tool calls
 * without results get a synthetic "interrupted" result. Nothing readable is lost.
 */
export class SessionParser {
  private readonly messages: Array<SessionMessage> = []
  private readonly problems: Array<string> = []
  private header: SessionHeader | undefined
  private lines = 0
  private anyLine = false
  /** Bytes of the file consumed by whole lines so far. */
  private offset = 0
  private validBytes = 0
  /** Pieces of a line that spans chunks. */
  private pending: Array<Buffer> = []
  private readonly positions = new Map<SessionMessage, LinePosition>()
  /** The start of the line being accepted. */
  private lineStart = 0

  constructor(private readonly name: string, private readonly from?: ParseFrom) {
    if (from !== undefined) {
      this.header = from.header
      this.anyLine = true
      this.offset = from.byteOffset
      this.validBytes = from.byteOffset
      this.lines = from.linesBefore + 1
    }
  }

  feed(chunk: Uint8Array): void {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    const last = bytes.lastIndexOf(newline)
    if (last === -1) {
      this.pending.push(bytes)
      return
    }
    // The chunk's whole lines, with the start of the first one if it began in an earlier chunk.
    const whole = this.pending.length === 0
      ? bytes.subarray(0, last + 1)
      : Buffer.concat([...this.pending, bytes.subarray(0, last + 1)])
    this.pending = last + 1 < bytes.length ? [bytes.subarray(last + 1)] : []
    // When the chunk is all ASCII, a line's bytes are its characters: its lines are parsed in one call when they can
    // be, or cut from one string. Otherwise each line is cut and decoded from the bytes.
    if (!isAscii(whole)) this.feedBytes(whole)
    else {
      const parsed = parseSessionLines(whole)
      if (parsed === undefined) this.feedAscii(whole)
      else {
        const { ends, values } = parsed
        let start = 0
        for (let i = 0; i < ends.length; i++) {
          this.completeValue(values[i], ends[i]! - start)
          start = ends[i]! + 1
        }
      }
    }
  }

  /** Whole lines of ASCII, a line at a time: a line's bytes are its characters, so lines are cut from one string. */
  private feedAscii(whole: Buffer): void {
    const text = whole.toString("latin1")
    let start = 0
    while (start < text.length) {
      const end = text.indexOf("\n", start)
      this.completeLine(text.slice(start, end), end - start)
      start = end + 1
    }
  }

  /** Whole lines, each cut and decoded from the bytes, so offsets stay exact even across bytes that are not UTF-8. */
  private feedBytes(whole: Buffer): void {
    let start = 0
    while (start < whole.length) {
      const end = whole.indexOf(newline, start)
      this.completeLine(whole.toString("utf8", start, end), end - start)
      start = end + 1
    }
  }

  private completeLine(raw: string, bytes: number): void {
    this.lines++
    this.lineStart = this.offset
    this.offset += bytes + 1
    // A line of only spaces is no line; it is kept on disk like any whole line.
    if (raw.charCodeAt(0) === 0x7b || raw.trim() !== "") {
      const decoded = decodeSessionLine(raw)
      if (decoded._tag === "Line") this.accept(decoded.line)
      else this.problems.push(`${this.name}: line ${this.lines} could not be read${reasonOf(decoded)} and was skipped`)
    }
    this.validBytes = this.offset
  }

  /** A line parsed already with the rest of its chunk (`parseSessionLines`): every such line is JSON. */
  private completeValue(value: unknown, bytes: number): void {
    this.lines++
    this.lineStart = this.offset
    this.offset += bytes + 1
    const known = decodeKnownValue(value)
    if (known !== undefined) this.accept(known)
    else {
      // The schema's judgement only: the hand-written check above already refused it.
      const decoded = decodeSlow(value)
      if (decoded._tag === "Line") this.accept(decoded.line)
      else this.problems.push(`${this.name}: line ${this.lines} could not be read${reasonOf(decoded)} and was skipped`)
    }
    this.validBytes = this.offset
  }

  private accept(line: SessionHeader | SessionMessage): void {
    if (line instanceof SessionHeader) {
      // Only the first line may be the header; a later one is a stray and means nothing.
      if (!this.anyLine) this.header = line
    } else {
      this.messages.push(line)
      if (line._tag === "user") {
        this.positions.set(line, { byteOffset: this.lineStart, linesBefore: (this.from?.linesBefore ?? 0) + this.messages.length - 1 })
      }
    }
    this.anyLine = true
  }

  /** The file ended: judges its last, unterminated line and pairs tool results with their calls. */
  finish(): Either.Either<ParsedSession, NotASession> {
    let missingNewline = false
    const rest = Buffer.concat(this.pending)
    this.pending = []
    const totalBytes = this.offset + rest.length
    const restText = rest.toString("utf8")
    if (restText.trim() !== "") {
      this.lines++
      this.lineStart = this.offset
      const decoded = decodeSessionLine(restText)
      if (decoded._tag === "NotJson") {
        this.problems.push(`${this.name}: dropped a torn last line (${rest.length} bytes of an unfinished write)`)
      } else {
        if (decoded._tag === "Line") this.accept(decoded.line)
        else if (decoded._tag === "TooDeep") {
          this.problems.push(`${this.name}: line ${this.lines} could not be read${reasonOf(decoded)}; kept in the file and skipped`)
        } else {
          this.problems.push(
            `${this.name}: line ${this.lines} is not a line this kern knows (written by a newer kern?); kept in the file and skipped`
          )
        }
        this.validBytes = totalBytes
        missingNewline = true
      }
    }
    const header = this.header
    if (header === undefined) {
      return Either.left({
        message: `${this.name} is not a kern session (no session header on its first line)`,
        empty: this.messages.length === 0 && this.problems.every((problem) => problem.includes("torn last line"))
      })
    }
    const { ordered, synthesized } = pairToolResults(this.messages)
    if (synthesized.length > 0) {
      this.problems.push(`${this.name}: ${synthesized.length} tool call(s) never finished; recorded as interrupted`)
    }
    return Either.right({
      header,
      messages: ordered,
      synthesized,
      messageLines: (this.from?.linesBefore ?? 0) + this.messages.length,
      validBytes: this.validBytes,
      tornBytes: totalBytes - this.validBytes,
      missingNewline,
      problems: this.problems,
      firstIndex: this.from?.messageIndex ?? 0,
      positions: this.positions
    })
  }
}

/** Parses a whole session file's text (tests and tools; kern itself streams the file through SessionParser). */
export const parseSession = (text: string | Uint8Array, name: string): Either.Either<ParsedSession, string> => {
  const parser = new SessionParser(name)
  parser.feed(typeof text === "string" ? Buffer.from(text, "utf8") : text)
  return Either.mapLeft(parser.finish(), (notASession) => notASession.message)
}

const interrupted = (call: { readonly id: string; readonly name: string }, at: string) =>
  new ToolResultMessage({ toolCallId: call.id, toolName: call.name, isError: true, result: interruptedResult, at })

/**
 * Puts each tool result right after the assistant message that called it, inventing "interrupted" ones. A result
 * belongs to the step it was written in (the run of results after one assistant message), and within the step the
 * k-th result with an id answers the k-th call with that id: providers reuse ids (some restart at `call_1` every
 * turn), so an id alone does not say which call a result answers.
 */
export const pairToolResults = (messages: ReadonlyArray<SessionMessage>) => {
  // Undefined while every step so far is in order: the order is then `messages` itself, and a long session's load
  // is spared copying it a message at a time. Made at the first step that is not, from the messages before it.
  let ordered: Array<SessionMessage> | undefined
  const synthesized: Array<ToolResultMessage> = []
  let i = 0
  while (i < messages.length) {
    const message = messages[i]!
    i++
    if (message._tag !== "assistant" || message.toolCalls.length === 0) {
      ordered?.push(message)
      continue
    }
    const calls = (message as AssistantMessage).toolCalls
    // The common step: each call answered by the result right after it, in order, and nothing more. That is what the
    // search below finds too (each call's first untaken result with its id is the next one); it is spared its arrays.
    let inOrder = 0
    while (
      inOrder < calls.length && i + inOrder < messages.length && messages[i + inOrder]!._tag === "tool" &&
      (messages[i + inOrder] as ToolResultMessage).toolCallId === calls[inOrder]!.id
    ) inOrder++
    if (inOrder === calls.length && (i + inOrder >= messages.length || messages[i + inOrder]!._tag !== "tool")) {
      if (ordered !== undefined) {
        ordered.push(message)
        for (let k = 0; k < inOrder; k++) ordered.push(messages[i + k]!)
      }
      i += inOrder
      continue
    }
    if (ordered === undefined) ordered = messages.slice(0, i)
    else ordered.push(message)
    const results: Array<ToolResultMessage> = []
    while (i < messages.length && messages[i]!._tag === "tool") results.push(messages[i++] as ToolResultMessage)
    const taken = new Array<boolean>(results.length).fill(false)
    for (const call of calls) {
      const index = results.findIndex((result, k) => !taken[k] && result.toolCallId === call.id)
      if (index === -1) {
        const synthetic = interrupted(call, message.at)
        synthesized.push(synthetic)
        ordered.push(synthetic)
      } else {
        taken[index] = true
        ordered.push(results[index]!)
      }
    }
    // A result whose call is unknown: keep it where it is rather than lose it.
    for (let k = 0; k < results.length; k++) if (!taken[k]) ordered.push(results[k]!)
  }
  return { ordered: ordered ?? messages, synthesized }
}
