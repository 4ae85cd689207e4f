import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { type Either, Effect, Option } from "effect"
import { type NotASession, type ParsedSession, SessionParser } from "./parse.js"

/** Bytes read at a time: big enough that a read's cost vanishes, small enough that a signal waits ~a millisecond. */
const chunkBytes = 1 << 20

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
    const parser = new SessionParser(name)
    for (;;) {
      const chunk = yield* file.readAlloc(chunkBytes)
      if (Option.isNone(chunk)) break
      parser.feed(chunk.value)
    }
    return parser.finish()
  }))
