import { Effect } from "effect"

/** The exit code of a command whose output was closed under it (`kern chat … | head -1`): 128 + SIGPIPE, as a shell's. */
export const closedOutputCode = 141

const isClosedPipe = (error: unknown): boolean => {
  const code = typeof error === "object" && error !== null && "code" in error ? error.code : undefined
  return code === "EPIPE" || code === "ERR_STREAM_DESTROYED"
}

/**
 * Succeeds once stdout or stderr can no longer be written (its reader went away: `| head -1`, a closed terminal).
 * Node reports that as an `error` event on the stream, which, unheard, is an uncaught exception: a stack trace, and an
 * exit that skips every finalizer (the folder's lock stays behind). Heard here, for every command in one place: the
 * command is interrupted (src/main.ts races it against this), so its scopes close, and later writes (a finalizer's
 * notice) fail quietly. Any other write error is a real failure: it ends the command as well, with its message.
 */
export const outputClosed = (streams: ReadonlyArray<NodeJS.WriteStream>): Effect.Effect<number> =>
  Effect.async<number>((resume) => {
    let settled = false
    const onError = (error: unknown) => {
      if (settled) return
      settled = true
      if (isClosedPipe(error)) return resume(Effect.succeed(closedOutputCode))
      const message = error instanceof Error ? error.message : String(error)
      resume(Effect.sync(() => {
        // stdout or stderr may be the broken one: the other one says so, if it can.
        for (const stream of streams) if (!stream.destroyed) stream.write(`kern: cannot write output: ${message}\n`)
        return 1
      }))
    }
    // The listeners stay for the life of the process: a write after the command ended must not crash it either.
    for (const stream of streams) stream.on("error", onError)
  })
