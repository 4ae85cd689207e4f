import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"

/**
 * A command's own log lines (warnings and errors) on stderr: stdout is the command's output, a reply or `--json`
 * events, and a warning there broke `kern chat --json` for the program reading it. Effect's default loggers (and the
 * pretty one `runMain` installs) write to stdout, so this is the only one in the foreground.
 */
export const foregroundLogger = Logger.prettyLogger({ stderr: true, colors: false })

export const withForegroundLogging = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  effect.pipe(
    Effect.locally(FiberRef.currentLoggers, HashSet.make(foregroundLogger)),
    Effect.locally(FiberRef.currentMinimumLogLevel, LogLevel.Warning)
  )
