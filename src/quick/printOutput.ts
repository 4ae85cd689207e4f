// How the plain quick clients (src/quick/statusAsk.ts, sessionsAsk.ts) print an output the full command made: as its
// own run ends, without loading node's stream modules when a direct write does.
import * as NodeFs from "node:fs"
import type { KeptOutput } from "./keptOutputs.js"

/** The exit code of a command whose output was closed under it (src/cli/closedOutput.ts closedOutputCode). */
const closedOutputCode = 141

/** Writes `text` to `stream` (process.stdout or process.stderr); a closed output ends the process as the CLI's does. */
const writeStream = (stream: NodeJS.WriteStream, text: string | Uint8Array) => {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED") process.exit(closedOutputCode)
  })
  stream.write(text)
}

/**
 * Writes `text` to the file descriptor `fd` (1 or 2) directly, as node's own stream does for a file, a pipe or a
 * terminal on Linux and macOS (synchronously), without making the stream: making process.stdout costs a few ms
 * (node's stream modules), a sixth of a kept ask. What a direct write does not finish (a descriptor left
 * non-blocking that is full, any error but a closed reader) goes on through the stream.
 */
const write = (fd: 1 | 2, text: string) => {
  if (process.platform === "win32") return writeStream(fd === 1 ? process.stdout : process.stderr, text)
  const bytes = Buffer.from(text, "utf8")
  let written = 0
  try {
    while (written < bytes.length) {
      const count = NodeFs.writeSync(fd, bytes, written, bytes.length - written)
      if (count <= 0) break
      written += count
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EPIPE") process.exit(closedOutputCode)
  }
  if (written < bytes.length) writeStream(fd === 1 ? process.stdout : process.stderr, bytes.subarray(written))
}

/** Writes the output as the command line's own run ends: stdout, then the failure on stderr with exit code 1. */
export const printOutput = (output: KeptOutput) => {
  write(1, `${output.stdout}\n`)
  if (output.failure !== null) {
    write(2, `kern: ${output.failure}\n`)
    process.exitCode = 1
  }
}

