import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Either, Effect, Option } from "effect"
import { decodeSessionLine } from "./lineDecode.js"
import { SessionHeader } from "./messages.js"
import { type NotASession, type ParsedSession, type ParseFrom, SessionParser } from "./parse.js"

/** Bytes read at a time: big enough that a read's cost vanishes, small enough that a signal waits ~a millisecond. */
const chunkBytes = 1 << 20

/** Where a session may be read from instead of its start: a context cut (src/context/Segment.ts ContextCut). */
export interface ReadFrom {
  readonly messageIndex: number
  readonly byteOffset: number
  readonly linesBefore: number
  /** The time of the message at the offset: the check that the file is still the one the cut was made in. */
  readonly at: string
}

const feedAll = (file: FileSystem.File, parser: SessionParser) =>
  Effect.gen(function*() {
    for (;;) {
      const chunk = yield* file.readAlloc(chunkBytes)
      if (Option.isNone(chunk)) break
      parser.feed(chunk.value)
    }
    return parser.finish()
  })

/**
 * Streams a session file through the parser, one chunk per read. Every read is a trip through the event loop, so a
 * load of any size never holds off SIGINT/SIGTERM (the runtime interrupts the fiber between chunks), and the file's
 * bytes are never all in memory at once.
 */
export const readSession = (
  path: string,
  name: string
): Effect.Effect<Either.Either<ParsedSession, NotASession>, PlatformError, FileSystem.FileSystem> =>
  Effect.scoped(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = yield* fs.open(path, { flag: "r" })
    return yield* feedAll(file, new SessionParser(name))
  }))

/** The file's first line, when it is a session header. */
const readHeader = (file: FileSystem.File) =>
  Effect.gen(function*() {
    let head = Buffer.alloc(0)
    while (head.indexOf(0x0a) === -1 && head.length < (1 << 16)) {
      const chunk = yield* file.readAlloc(4_096)
      if (Option.isNone(chunk)) break
      head = Buffer.concat([head, chunk.value])
    }
    const end = head.indexOf(0x0a)
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
): Effect.Effect<Option.Option<ParsedSession>, PlatformError, FileSystem.FileSystem> =>
  Effect.scoped(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = yield* fs.open(path, { flag: "r" })
    const size = Number((yield* file.stat).size)
    if (from.byteOffset <= 0 || from.byteOffset >= size) return Option.none()
    const header = yield* readHeader(file)
    if (Option.isNone(header)) return Option.none()
    yield* file.seek(from.byteOffset, "start")
    const start: ParseFrom = { header: header.value, byteOffset: from.byteOffset, linesBefore: from.linesBefore, messageIndex: from.messageIndex }
    const parsed = yield* feedAll(file, new SessionParser(name, start))
    if (Either.isLeft(parsed)) return Option.none()
    const first = parsed.right.messages[0]
    return first !== undefined && first._tag === "user" && first.at === from.at && parsed.right.positions.get(first)?.byteOffset === from.byteOffset
      ? Option.some(parsed.right)
      : Option.none()
  }))
