import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect, Option } from "effect"
import { decodeSessionLine } from "../../session/lineDecode.js"
import type { SessionMessage } from "../../session/messages.js"

const chunkBytes = 1 << 20
const newline = 0x0a

/**
 * Folds over a session file's messages in file order, a chunk at a time: only the current chunk and the caller's
 * accumulator are in memory, so a route can page or count a session of any size. The header, lines that do not
 * decode and a torn last line are skipped; `index` counts the messages folded so far.
 */
export const foldSessionMessages = <A>(
  path: string,
  initial: A,
  step: (acc: A, message: SessionMessage, index: number) => A
): Effect.Effect<A, PlatformError, FileSystem.FileSystem> =>
  Effect.scoped(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = yield* fs.open(path, { flag: "r" })
    let acc = initial
    let index = 0
    let pending: Array<Buffer> = []
    const line = (bytes: Buffer) => {
      const decoded = decodeSessionLine(bytes.toString("utf8"))
      if (decoded._tag !== "Line" || decoded.line._tag === "session") return
      acc = step(acc, decoded.line, index)
      index += 1
    }
    for (;;) {
      const chunk = yield* file.readAlloc(chunkBytes)
      if (Option.isNone(chunk)) break
      const bytes = Buffer.from(chunk.value.buffer, chunk.value.byteOffset, chunk.value.byteLength)
      let start = 0
      for (let end = bytes.indexOf(newline, start); end !== -1; end = bytes.indexOf(newline, start)) {
        const piece = bytes.subarray(start, end)
        line(pending.length === 0 ? piece : Buffer.concat([...pending, piece]))
        pending = []
        start = end + 1
      }
      if (start < bytes.length) pending.push(bytes.subarray(start))
    }
    // A last line without its newline is whole only if it decodes: a torn write does not.
    if (pending.length > 0) line(Buffer.concat(pending))
    return acc
  }))
