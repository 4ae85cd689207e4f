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
 * notice) fail quietly. Any other write error (the disk under a redirected output or the background agent's log is
 * full) ends nothing: the line is dropped and the command goes on, as the agent must (there is nowhere left to say it;
 * what a turn said is in its session all the same).
 */
export const outputClosed = (streams: ReadonlyArray<NodeJS.WriteStream>): Effect.Effect<number> =>
  Effect.async<number>((resume) => {
    let settled = false
    const onError = (error: unknown) => {
      if (settled || !isClosedPipe(error)) return
      settled = true
      resume(Effect.succeed(closedOutputCode))
    }
    // The listeners stay for the life of the process: a write after the command ended must not crash it either.
    for (const stream of streams) stream.on("error", onError)
  })
