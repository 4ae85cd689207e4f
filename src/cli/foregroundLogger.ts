import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"

/**
 * A command's own log lines (warnings and errors) on stderr: stdout is the command's output, a reply or `--json`
 * events, and a warning there broke `kern chat --json` for the program reading it. Effect's default loggers (and the
 * pretty one `runMain` installs) write to stdout, so they are replaced.
 */
export const foregroundLogger = Logger.prettyLogger({ stderr: true, colors: false })

export const foregroundLogging = Layer.mergeAll(
  Logger.remove(Logger.defaultLogger),
  Logger.remove(Logger.prettyLoggerDefault),
  Logger.add(foregroundLogger),
  Logger.minimumLogLevel(LogLevel.Warning)
)
