import { Console, Effect, FiberRef, HashSet, Logger, LogLevel, Schedule } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as KnownSecrets from "../config/KnownSecrets.js"
import type { AgentLogging } from "../host/liveAgent.js"
import type { HostFiles } from "../storage/hostFiles.js"
import { privateDirMode, privateFileMode } from "../storage/privateFiles.js"
import { CommandFailed } from "./errors.js"
import { rotateLog } from "./daemonFiles.js"
import { jsonLineLogger } from "./fileLogger.js"
import { foregroundLogger } from "./foregroundLogger.js"

/**
 * `kern serve`'s log: every line from debug on as JSON (`.kern-host/logs/kern.log`, what `kern logs --host` reads and
 * `kern logs DIR` filters by the `agent` annotation each hosted agent's lines carry), rotated as the background
 * agent's is; warnings and errors also on stderr, as in the foreground. The host's token is redacted everywhere, an
 * agent's own secrets in that agent's lines (`agentLogging`).
 */
export interface HostLog {
  /** The command's run with the host's loggers (the file's, stderr's) in place of the foreground one. */
  readonly logged: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** What `kern serve` reports: on stderr as `kern: …`, and into the log as a warning. */
  readonly report: (line: string) => Effect.Effect<void>
  readonly agentLogging: AgentLogging
}

/** A line that cannot be written (the disk is full) is dropped and the host goes on: there is nowhere left to say it. */
const appendTo = (fd: number) => (line: string) => {
  try {
    NodeFs.writeSync(fd, line)
  } catch {
    // dropped
  }
}

export const make = (files: HostFiles, token: string) =>
  Effect.gen(function*() {
    const fd = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          NodeFs.mkdirSync(NodePath.dirname(files.logFile), { recursive: true, mode: privateDirMode })
          return NodeFs.openSync(files.logFile, "a", privateFileMode)
        },
        catch: (error) => new CommandFailed({ message: `could not open the host's log ${files.logFile}: ${error instanceof Error ? error.message : String(error)}` })
      }),
      (fd) => Effect.sync(() => NodeFs.closeSync(fd))
    )
    const write = appendTo(fd)
    const hostSecrets = KnownSecrets.make([["KERN_HOST_TOKEN", token]]).secrets
    const fileLogger = jsonLineLogger(hostSecrets, write)
    const stderrLogger = Logger.filterLogLevel(foregroundLogger, LogLevel.greaterThanEqual(LogLevel.Warning))
    yield* Effect.forkScoped(
      rotateLog(files.logFile).pipe(
        Effect.catchAll((error) => Effect.logWarning(`could not rotate ${files.logFile}: ${error.message}`)),
        Effect.repeat(Schedule.spaced("1 minute"))
      )
    )
    const logged = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(
        Effect.locally(FiberRef.currentLoggers, HashSet.make<Array<Logger.Logger<unknown, any>>>(stderrLogger, fileLogger)),
        Effect.locally(FiberRef.currentMinimumLogLevel, LogLevel.Debug)
      )
    const report = (line: string) =>
      Effect.zipRight(
        Console.error(`kern: ${line}`),
        // Into the file only: it is on stderr already.
        Effect.logWarning(line).pipe(Effect.locallyWith(FiberRef.currentLoggers, HashSet.remove(stderrLogger)))
      )
    const agentLogging: AgentLogging = (secrets) => {
      const agentLogger = jsonLineLogger(KnownSecrets.make([...hostSecrets, ...secrets].map((s) => [s.name, s.value] as const)).secrets, write)
      return (effect) => Effect.locallyWith(effect, FiberRef.currentLoggers, (set) => HashSet.add(HashSet.remove(set, fileLogger), agentLogger))
    }
    return { logged, report, agentLogging } satisfies HostLog
  })
