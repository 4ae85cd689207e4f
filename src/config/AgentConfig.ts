import { FileSystem } from "@effect/platform"
import { Context, Effect, Either, Layer } from "effect"
import * as NodePath from "node:path"
import { applyEnvOverrides, decodeConfigFile, type DecodedConfig, parseConfigJson } from "./decode.js"
import { parseDotenv } from "./dotenv.js"
import { ConfigError } from "./errors.js"
import { type AgentPaths, agentPaths } from "./paths.js"
import { ProcessEnv } from "./ProcessEnv.js"
import type { KernConfig } from "./schema.js"

/** An agent folder's configuration, decoded once: config.json with defaults, `.env`, then KERN_* overrides. */
export interface LoadedConfig {
  readonly paths: AgentPaths
  /** Whether `.kern/config.json` exists (an agent folder) or only defaults and environment were used. */
  readonly fileExists: boolean
  readonly config: KernConfig
  /** The inherited environment with `.kern/.env` on top. */
  readonly env: Readonly<Record<string, string>>
  /** The keys `.kern/.env` defines: secrets that tools must not pass on. */
  readonly secretKeys: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
}

export class AgentConfig extends Context.Tag("kern/config/AgentConfig")<AgentConfig, LoadedConfig>() {}

/** Files are named in messages as the user named the folder, so `kern status ./a` says `a/.kern/config.json`. */
const displayPath = (dir: string, file: string): string => NodePath.join(dir, ".kern", file)

const readIfExists = (fs: FileSystem.FileSystem, file: string) =>
  fs.exists(file).pipe(
    Effect.flatMap((exists) => (exists ? fs.readFileString(file) : Effect.succeed(undefined)))
  )

/** config.json's text (`source` as named to the user, none when there is no file) decoded, for the folder `folderName`. */
type DecodeText = (source: string, text: string | undefined, folderName: string) => Either.Either<DecodedConfig, ConfigError>

const decodeText: DecodeText = (source, text, folderName) =>
  Either.flatMap(text === undefined ? Either.right({}) : parseConfigJson(source, text), (raw) => decodeConfigFile(source, raw, folderName))

const loadWith = (decode: DecodeText) =>
  Effect.fn("kern.config.load")(function*(dir: string, cwd?: string) {
    const fs = yield* FileSystem.FileSystem
    const inherited = yield* ProcessEnv
    const paths = agentPaths(cwd === undefined ? dir : NodePath.resolve(cwd, dir))
    const configSource = displayPath(dir, "config.json")
    const envSource = displayPath(dir, ".env")
    const unreadable = (source: string) => (error: { readonly message: string }) =>
      new ConfigError({ source, expected: "a readable file", found: error.message })

    const configText = yield* readIfExists(fs, paths.configFile).pipe(Effect.mapError(unreadable(configSource)))
    const envText = yield* readIfExists(fs, paths.envFile).pipe(Effect.mapError(unreadable(envSource)))

    const decoded = yield* decode(configSource, configText, NodePath.basename(paths.dir))
    const dotenv = envText === undefined ? { values: {}, problems: [] } : parseDotenv(envText)
    const env: Record<string, string> = {}
    for (const [key, value] of Object.entries(inherited)) if (value !== undefined) env[key] = value
    Object.assign(env, dotenv.values)
    const config = yield* applyEnvOverrides(decoded.config, env)
    return {
      paths,
      fileExists: configText !== undefined,
      config,
      env,
      secretKeys: Object.keys(dotenv.values),
      warnings: [...decoded.warnings, ...dotenv.problems.map((problem) => `${envSource}: ${problem}`)]
    } satisfies LoadedConfig
  })

/**
 * The configuration of the folder `dir`, relative to `cwd` when given (the folder a client named it from: the running
 * agent's POST /status/report), else to this process's folder.
 */
export const loadConfig = loadWith(decodeText)

/**
 * `loadConfig` for a caller that loads the same folder's configuration again and again (the running agent's POST
 * /status/report, at every `kern status`): the files are read every time, and config.json's text decoded again only
 * when it, its name as shown or the folder's name differs from the last load's; the decoded config is a value
 * nobody changes, so the last one serves as well as a new one.
 */
export const makeConfigLoader = Effect.sync(() => {
  let last: { readonly source: string; readonly text: string | undefined; readonly folderName: string; readonly decoded: Either.Either<DecodedConfig, ConfigError> } | undefined
  return loadWith((source, text, folderName) => {
    if (last === undefined || last.source !== source || last.text !== text || last.folderName !== folderName) {
      last = { source, text, folderName, decoded: decodeText(source, text, folderName) }
    }
    return last.decoded
  })
})

/** Loads the agent folder's configuration once and provides it. */
export const layer = (dir: string): Layer.Layer<AgentConfig, ConfigError, FileSystem.FileSystem | ProcessEnv> =>
  Layer.effect(AgentConfig, loadConfig(dir))
