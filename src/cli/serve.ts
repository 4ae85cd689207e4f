import { Console, Effect, Either, Option } from "effect"
import * as NodePath from "node:path"
import { runHost } from "../host/Host.js"
import { type HostSettings, loadHostConfig, settingsOfDirs } from "../host/HostConfig.js"
import { hostFiles, hostToken } from "../host/hostHome.js"
import { UsageError } from "./errors.js"
import * as HostLog from "./hostLog.js"

export interface ServeArgs {
  readonly dirs: ReadonlyArray<string>
  readonly config: Option.Option<string>
  readonly host: Option.Option<string>
  readonly port: Option.Option<number>
  readonly idleSeconds: Option.Option<number>
  readonly home: Option.Option<string>
}

const stderr = (line: string) => Console.error(`kern: ${line}`)

/** The settings from host.json (the flags override its host, port and idleSeconds) or from the folders named. */
const settingsOf = (args: ServeArgs) =>
  Effect.gen(function*() {
    const overrides = {
      host: Option.getOrUndefined(args.host),
      port: Option.getOrUndefined(args.port),
      idleSeconds: Option.getOrUndefined(args.idleSeconds)
    }
    if (Option.isSome(args.config)) {
      if (args.dirs.length > 0) return yield* new UsageError({ message: "give either --config host.json or agent folders, not both" })
      const file = NodePath.resolve(args.config.value)
      const loaded = yield* loadHostConfig(file)
      const settings: HostSettings = {
        ...loaded,
        host: overrides.host ?? loaded.host,
        port: overrides.port ?? loaded.port,
        idleSeconds: overrides.idleSeconds ?? loaded.idleSeconds
      }
      return { settings, home: Option.getOrElse(args.home, () => NodePath.dirname(file)), configFile: file }
    }
    if (args.dirs.length === 0) return yield* new UsageError({ message: "name the agents: kern serve --config host.json, or kern serve DIR..." })
    const settings = settingsOfDirs(args.dirs, overrides)
    if (Either.isLeft(settings)) return yield* settings.left
    return { settings: settings.right, home: Option.getOrElse(args.home, () => process.cwd()), configFile: undefined }
  })

/**
 * `kern serve`: many agents in one process, until a signal. Its log (`.kern-host/logs/kern.log`, src/cli/hostLog.ts)
 * takes every line from its start to the last agent stopped; warnings and errors are on stderr too.
 */
export const serve = (args: ServeArgs) =>
  Effect.gen(function*() {
    const { configFile, home, settings } = yield* settingsOf(args)
    yield* Effect.scoped(Effect.gen(function*() {
      const env = Object.fromEntries(Object.entries(process.env).flatMap(([name, value]) => value === undefined ? [] : [[name, value] as const]))
      const files = hostFiles(home)
      const log = yield* HostLog.make(files, yield* hostToken(files))
      yield* log.logged(Effect.scoped(Effect.gen(function*() {
        const { hostUrl } = yield* runHost({ settings, home, configFile, report: log.report, logging: log.agentLogging, env })
        yield* stderr(`serving ${settings.agents.length} agents on ${hostUrl}/agents/<name>/, the host page on ${hostUrl}/ (pid ${process.pid}; log in ${files.logFile})`)
        yield* Effect.never
      })))
    }))
  })
