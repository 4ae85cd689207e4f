import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect, Option } from "effect"
import { decodeSessionLine } from "../session/lineDecode.js"
import type { SessionMessage } from "../session/messages.js"

/**
 * Bytes read at a time: 64 KiB (~200 lines). Each read's lines are decoded in one synchronous stretch; with 1 MiB
 * reads a backfill held a turn beside it up for tens of milliseconds per read (recall.turn.during-backfill).
 */
const chunkBytes = 1 << 16

const newline = 0x0a

export interface SessionTail {
  /** The messages of the whole lines past `from`, in file order (the header and unreadable lines skipped). */
  readonly messages: ReadonlyArray<SessionMessage>
  /** Byte offset just past the last whole line: where the next pass starts. A torn last line waits for it. */
  readonly offset: number
}

/**
 * Reads only the bytes of a session file past `from`, line by line through the session's own line decoder
 * (lineDecode.ts). Unlike a load, this is a tail: pairing tool results with their calls is the model's concern, not
 * the index's, and a line still being written is left for the next pass instead of judged.
 */
export const readSessionTail = (
  path: string,
  from: number
): Effect.Effect<SessionTail, PlatformError, FileSystem.FileSystem> =>
  Effect.scoped(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = yield* fs.open(path, { flag: "r" })
    yield* file.seek(from, "start")
    const messages: Array<SessionMessage> = []
    let offset = from
    let pending: Array<Buffer> = []
    for (;;) {
      const read = yield* file.readAlloc(chunkBytes)
      if (Option.isNone(read)) break
      const bytes = Buffer.from(read.value.buffer, read.value.byteOffset, read.value.byteLength)
      const last = bytes.lastIndexOf(newline)
      if (last === -1) {
        pending.push(bytes)
        continue
      }
      const whole = pending.length === 0 ? bytes.subarray(0, last + 1) : Buffer.concat([...pending, bytes.subarray(0, last + 1)])
      pending = last + 1 < bytes.length ? [bytes.subarray(last + 1)] : []
      let start = 0
      while (start < whole.length) {
        const end = whole.indexOf(newline, start)
        const decoded = decodeSessionLine(whole.toString("utf8", start, end))
        if (decoded._tag === "Line" && decoded.line._tag !== "session") messages.push(decoded.line)
        start = end + 1
      }
      offset += whole.length
    }
    return { messages, offset }
  }))
