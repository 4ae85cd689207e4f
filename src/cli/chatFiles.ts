// The files `kern chat --file PATH` sends: read here, on the operator's side, and checked against the agent's media
// caps before anything is sent or stored. It imports no runtime module: the quick chat bundle may load it.
import { FileSystem, Path } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect } from "effect"
import type { MediaConfig } from "../config/media.js"
import { CommandFailed, UsageError } from "./errors.js"
import { sizeText } from "../media/sizeText.js"

/** A file read for a chat message: the name it goes by (its base name, never the path) and its bytes. */
export interface ChatFile {
  readonly name: string
  readonly bytes: Uint8Array
}


const tooLarge = (path: string, bytes: number, cap: number) =>
  new CommandFailed({
    message: `--file ${path} is ${sizeText(bytes)}; files over ${sizeText(cap)} are not taken (config media.maxFileBytes)`
  })

/**
 * Reads one `--file`: a missing path or a directory is a mistake in the command line (exit 2); a file too large, empty
 * or unreadable is a failure naming it (exit 1). Its size is checked before it is read, and again after (it may grow).
 */
const readOne = (given: string, limits: MediaConfig) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const info = yield* fs.stat(given).pipe(
      Effect.mapError((error) =>
        error._tag === "SystemError" && error.reason === "NotFound"
          ? new UsageError({ message: `--file ${given}: no such file` })
          : new CommandFailed({ message: `--file ${given} could not be read: ${reasonOf(error)}` })
      )
    )
    if (info.type === "Directory") {
      return yield* new UsageError({ message: `--file ${given} is a directory; --file takes one file (give it once per file)` })
    }
    if (info.type !== "File") return yield* new UsageError({ message: `--file ${given} is not a regular file (${info.type})` })
    if (Number(info.size) > limits.maxFileBytes) return yield* tooLarge(given, Number(info.size), limits.maxFileBytes)
    const bytes = yield* fs.readFile(given).pipe(
      Effect.mapError((error) => new CommandFailed({ message: `--file ${given} could not be read: ${reasonOf(error)}` }))
    )
    if (bytes.length > limits.maxFileBytes) return yield* tooLarge(given, bytes.length, limits.maxFileBytes)
    if (bytes.length === 0) return yield* new CommandFailed({ message: `--file ${given} is empty` })
    return { name: path.basename(given), bytes } satisfies ChatFile
  })

/** A platform error in the system's words (`permission denied`, `not a directory`), without its call and path. */
const reasonOf = (error: PlatformError) => {
  if (error._tag !== "SystemError") return error.message
  if (error.reason === "PermissionDenied") return "permission denied"
  return /^[A-Z]+: ([^,]+)/.exec(error.description ?? "")?.[1] ?? error.reason
}

/**
 * The `--file` paths of a chat, read in order and refused together over `media.maxTurnBytes` (the agent checks the
 * same caps again when it stores them).
 */
export const readChatFiles = (paths: ReadonlyArray<string>, limits: MediaConfig) =>
  Effect.gen(function*() {
    const files = yield* Effect.forEach(paths, (given) => readOne(given, limits))
    const total = files.reduce((sum, file) => sum + file.bytes.length, 0)
    if (total > limits.maxTurnBytes) {
      return yield* new CommandFailed({
        message: `the --file files are ${sizeText(total)} together; a message may carry ${
          sizeText(limits.maxTurnBytes)
        } (config media.maxTurnBytes)`
      })
    }
    return files
  })
