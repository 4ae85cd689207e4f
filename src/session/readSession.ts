import { Data, Effect, Either, Option } from "effect"
import * as NodeFs from "node:fs"
import { yieldToEventLoop } from "../config/eventLoop.js"
import { decodeSessionLine } from "./lineDecode.js"
import { SessionHeader } from "./messages.js"
import { type NotASession, type ParsedSession, type ParseFrom, SessionParser } from "./parse.js"

/** Bytes read at a time: big enough that a read's cost vanishes, small enough that a signal waits ~a millisecond. */
const chunkBytes = 1 << 20

/** The longest first line read for a session's header. */
const headerBytes = 1 << 16

const newline = 0x0a

/** A session file that could not be opened or read (it vanished, or is a folder, or unreadable to this user). */
export class SessionFileError extends Data.TaggedError("SessionFileError")<{
  readonly path: string
  readonly operation: "open" | "read"
  readonly detail: string
}> {
  /** What the system said (its own words name the file), for a caller that says what it was doing. */
  override get message() {
    return this.detail
  }
}

/** Where a session may be read from instead of its start: a context cut (src/context/Segment.ts ContextCut). */
export interface ReadFrom {
  readonly messageIndex: number
  readonly byteOffset: number
  readonly linesBefore: number
  /** The time of the message at the offset: the check that the file is still the one the cut was made in. */
  readonly at: string
}

const attempt = <A>(path: string, operation: SessionFileError["operation"], f: () => A) =>
  Effect.try({
    try: f,
    catch: (error) =>
      new SessionFileError({ path, operation, detail: error instanceof Error ? error.message : String(error) })
  })

/** The file open for reading for the scope. */
const openFile = (path: string) =>
  Effect.acquireRelease(
    attempt(path, "open", () => NodeFs.openSync(path, "r")),
    (fd) => Effect.sync(() => NodeFs.closeSync(fd)).pipe(Effect.ignore)
  )

/**
 * Feeds the file from `position` to its end through the parser, a chunk of whole lines at a time, and judges it. A
 * read is synchronous (from the OS's cache, a fraction of a millisecond): through the thread pool each of them left
 * the main thread idle, ~10 ms of a 10,000-message session's first open on this machine. Between two chunks the
 * event loop runs (`yieldToEventLoop`), so a load of any size never holds off SIGINT/SIGTERM: the runtime interrupts
 * the fiber there. The part of a line that a read cut off is copied to the front of the next chunk, so the parser is
 * handed whole lines and copies nothing; a line longer than a chunk is left to the parser, which joins its pieces
 * once.
 */
const feedFrom = (path: string, fd: number, position: number, parser: SessionParser) =>
  Effect.gen(function*() {
    let at = position
    let carry = Buffer.alloc(0)
    for (;;) {
      const buffer = Buffer.allocUnsafe(carry.length + chunkBytes)
      carry.copy(buffer, 0)
      const read = yield* attempt(path, "read", () => NodeFs.readSync(fd, buffer, carry.length, chunkBytes, at))
      if (read === 0) break
      at += read
      const filled = carry.length + read
      const last = buffer.lastIndexOf(newline, filled - 1)
      if (last === -1) {
        parser.feed(buffer.subarray(0, filled))
        carry = Buffer.alloc(0)
      } else {
        parser.feed(buffer.subarray(0, last + 1))
        carry = buffer.subarray(last + 1, filled)
      }
      yield* yieldToEventLoop
    }
    if (carry.length > 0) parser.feed(carry)
    return parser.finish()
  })

/**
 * Reads a session file through the parser, one chunk per read; the file's bytes are never all in memory at once.
 */
export const readSession = (
  path: string,
  name: string
): Effect.Effect<Either.Either<ParsedSession, NotASession>, SessionFileError> =>
  Effect.scoped(Effect.flatMap(openFile(path), (fd) => feedFrom(path, fd, 0, new SessionParser(name))))

/** The file's first line, when it is a session header. */
const readHeader = (path: string, fd: number) =>
  Effect.gen(function*() {
    const head = Buffer.allocUnsafe(headerBytes)
    let filled = 0
    for (;;) {
      const read = yield* attempt(path, "read", () => NodeFs.readSync(fd, head, filled, headerBytes - filled, filled))
      filled += read
      if (read === 0 || filled === headerBytes || head.subarray(0, filled).indexOf(newline, filled - read) !== -1) break
    }
    const end = head.subarray(0, filled).indexOf(newline)
    if (end === -1) return Option.none<SessionHeader>()
    const decoded = decodeSessionLine(head.toString("utf8", 0, end))
    return decoded._tag === "Line" && decoded.line instanceof SessionHeader ? Option.some(decoded.line) : Option.none()
  })

/**
 * Reads a session from its context cut on: the header from the first line, then only the lines from the cut's byte
 * offset. None when the file is not the one the cut was made in (shorter than the offset, no header, or the line
 * there is not the user message of the cut's time): the caller reads the whole file instead.
 */
export const readSessionFrom = (
  path: string,
  name: string,
  from: ReadFrom
): Effect.Effect<Option.Option<ParsedSession>, SessionFileError> =>
  Effect.scoped(Effect.gen(function*() {
    const fd = yield* openFile(path)
    const size = (yield* attempt(path, "read", () => NodeFs.fstatSync(fd))).size
    if (from.byteOffset <= 0 || from.byteOffset >= size) return Option.none()
    const header = yield* readHeader(path, fd)
    if (Option.isNone(header)) return Option.none()
    const start: ParseFrom = { header: header.value, byteOffset: from.byteOffset, linesBefore: from.linesBefore, messageIndex: from.messageIndex }
    const parsed = yield* feedFrom(path, fd, from.byteOffset, new SessionParser(name, start))
    if (Either.isLeft(parsed)) return Option.none()
    const first = parsed.right.messages[0]
    return first !== undefined && first._tag === "user" && first.at === from.at && parsed.right.positions.get(first)?.byteOffset === from.byteOffset
      ? Option.some(parsed.right)
      : Option.none()
  }))
