import { FileSystem } from "@effect/platform"
import { DateTime, Effect, Either, Schema } from "effect"
import * as NodePath from "node:path"
import { decodeConfigFile } from "../config/decode.js"
import { agentPaths } from "../config/paths.js"
import { apiKeyEnvFor } from "../config/providers.js"
import type { ContractEnforcement, Provider } from "../config/schema.js"
import { parseJsonText } from "../config/json.js"
import { privateModes } from "../storage/privateFiles.js"
import { Git } from "./Git.js"
import { gitignoreLines, templates } from "./templates.js"

export interface InitOptions {
  readonly dir: string
  readonly name?: string | undefined
  readonly provider?: Provider | undefined
  readonly model?: string | undefined
  readonly baseURL?: string | undefined
  readonly apiKeyEnv?: string | undefined
  readonly embeddingModel?: string | false | undefined
  readonly contractEnforcement?: ContractEnforcement | undefined
  readonly git: boolean
  readonly force: boolean
}

export interface InitReport {
  readonly dir: string
  readonly name: string
  /** Paths (relative to the folder) written by this run. */
  readonly written: ReadonlyArray<string>
  /** Paths that existed and were left as they were. */
  readonly kept: ReadonlyArray<string>
  readonly git: { readonly status: "committed" | "unchanged" | "skipped"; readonly detail?: string }
  readonly warnings: ReadonlyArray<string>
  /** The folder's contract enforcement: under `enforce` the caller approves the first contract baseline. */
  readonly contractEnforcement: ContractEnforcement
}

/** `kern init` could not create the agent folder. */
export class InitError extends Schema.TaggedError<InitError>()("InitError", {
  reason: Schema.Literal("exists", "invalid", "io"),
  message: Schema.String
}) {}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const stripUndefined = (record: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined))

/**
 * Creates an agent folder: memory templates, `.kern/config.json`, `.kern/.env` (0600), `.gitignore`, and a first
 * commit. An existing agent is refused unless `force`, which fills in what is missing and updates config.json with
 * the given flags, but never deletes or overwrites memory files or secrets.
 */
export const initAgent = Effect.fn("kern.memory.init")(function*(options: InitOptions) {
  const fs = yield* FileSystem.FileSystem
  const paths = agentPaths(options.dir)
  const io = (what: string) => (error: { readonly message: string }) =>
    new InitError({ reason: "io", message: `${what}: ${error.message}` })
  const exists = (file: string) => fs.exists(file).pipe(Effect.mapError(io(`could not inspect ${file}`)))

  const isAgent = (yield* exists(paths.configFile)) || (yield* exists(NodePath.join(paths.dir, "AGENTS.md")))
  if (isAgent && !options.force) {
    return yield* new InitError({
      reason: "exists",
      message: `${options.dir} is already an agent folder; use --force to add what is missing (memory files are kept)`
    })
  }
  if ((yield* exists(paths.dir)) && (yield* fs.stat(paths.dir).pipe(Effect.mapError(io(paths.dir)))).type !== "Directory") {
    return yield* new InitError({ reason: "invalid", message: `${options.dir} exists and is not a folder` })
  }

  const written: Array<string> = []
  const kept: Array<string> = []
  const warnings: Array<string> = []

  // config.json: the given flags on top of whatever a forced re-init finds.
  let previous: Record<string, unknown> = {}
  let previousText: string | undefined
  if (yield* exists(paths.configFile)) {
    const text = yield* fs.readFileString(paths.configFile).pipe(Effect.mapError(io(`could not read ${paths.configFile}`)))
    previousText = text
    const parsed = parseJsonText(text)
    if (Either.isRight(parsed) && isRecord(parsed.right)) {
      previous = parsed.right
    } else {
      const backup = `${paths.configFile}.bak`
      yield* fs.writeFileString(backup, text, { mode: privateModes.file }).pipe(Effect.mapError(io(`could not back up ${paths.configFile}`)))
      warnings.push(`.kern/config.json was not a JSON object; the old file is kept as .kern/config.json.bak`)
    }
  }
  const name = options.name ?? (typeof previous["name"] === "string" ? previous["name"] : NodePath.basename(paths.dir))
  const config = stripUndefined({
    ...previous,
    name,
    provider: options.provider ?? previous["provider"] ?? "openrouter",
    model: options.model ?? previous["model"],
    baseURL: options.baseURL ?? previous["baseURL"],
    apiKeyEnv: options.apiKeyEnv ?? previous["apiKeyEnv"],
    embeddingModel: options.embeddingModel ?? previous["embeddingModel"],
    contractEnforcement: options.contractEnforcement ?? previous["contractEnforcement"],
    // No repository was asked for: memory commits would only warn after every turn.
    autoCommit: previous["autoCommit"] ?? (options.git ? undefined : false)
  })
  const decoded = decodeConfigFile(".kern/config.json", config, NodePath.basename(paths.dir))
  if (Either.isLeft(decoded)) {
    return yield* new InitError({ reason: "invalid", message: decoded.left.message })
  }
  warnings.push(...decoded.right.warnings)

  yield* fs.makeDirectory(paths.kernDir, { recursive: true, mode: privateModes.dir }).pipe(
    Effect.mapError(io(`could not create ${paths.kernDir}`))
  )
  const configText = JSON.stringify(config, null, 2) + "\n"
  if (previousText === configText) {
    kept.push(".kern/config.json")
  } else {
    yield* fs.writeFileString(paths.configFile, configText, { mode: privateModes.file }).pipe(
      Effect.mapError(io(`could not write ${paths.configFile}`))
    )
    written.push(".kern/config.json")
  }

  if (yield* exists(paths.envFile)) {
    kept.push(".kern/.env")
  } else {
    const keyEnv = apiKeyEnvFor(decoded.right.config)
    const header = [
      "# Secrets for this agent. This file is never committed and is readable only by you (mode 0600).",
      "# Its keys override the inherited environment and are hidden from the agent's tools.",
      keyEnv === undefined ? "# This provider needs no API key." : `# ${keyEnv}=`
    ].join("\n")
    yield* fs.writeFileString(paths.envFile, `${header}\n`, { mode: 0o600 }).pipe(
      Effect.mapError(io(`could not write ${paths.envFile}`))
    )
    written.push(".kern/.env")
  }
  // writeFile's mode applies only when it creates the file; an existing .env is tightened too.
  yield* fs.chmod(paths.envFile, 0o600).pipe(Effect.mapError(io(`could not protect ${paths.envFile}`)))

  const date = DateTime.formatIsoDate(yield* DateTime.now)
  for (const [relative, content] of templates({ name, date })) {
    const file = NodePath.join(paths.dir, relative)
    if (yield* exists(file)) {
      kept.push(relative)
      continue
    }
    yield* fs.makeDirectory(NodePath.dirname(file), { recursive: true }).pipe(Effect.mapError(io(`could not create ${file}`)))
    yield* fs.writeFileString(file, content).pipe(Effect.mapError(io(`could not write ${file}`)))
    written.push(relative)
  }

  const gitignore = NodePath.join(paths.dir, ".gitignore")
  const currentIgnore = (yield* exists(gitignore))
    ? yield* fs.readFileString(gitignore).pipe(Effect.mapError(io(`could not read ${gitignore}`)))
    : ""
  const have = new Set(currentIgnore.split(/\r?\n/).map((line) => line.trim()))
  const missing = gitignoreLines.filter((line) => !have.has(line))
  if (missing.length > 0) {
    const prefix = currentIgnore === "" || currentIgnore.endsWith("\n") ? currentIgnore : `${currentIgnore}\n`
    yield* fs.writeFileString(gitignore, `${prefix}${missing.join("\n")}\n`).pipe(Effect.mapError(io(`could not write ${gitignore}`)))
    written.push(".gitignore")
  } else {
    kept.push(".gitignore")
  }

  const gitResult = options.git
    // A re-init commits only what it wrote: the agent's own edits to kept files are not an "initialize" change.
    // `.kern/` is never committed (seed 001: git holds the memory files only).
    ? yield* commitInitial(paths.dir, name, (isAgent ? written : [...written, ...kept]).filter((path) => !path.startsWith(".kern/")))
    : { status: "skipped" as const, detail: "--no-git" }
  if (gitResult.status === "skipped" && options.git) warnings.push(`git skipped: ${gitResult.detail}`)

  const { contractEnforcement } = decoded.right.config
  return { dir: paths.dir, name, written, kept, git: gitResult, warnings, contractEnforcement } satisfies InitReport
})

const commitInitial = (dir: string, name: string, files: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const git = yield* Git
    const fs = yield* FileSystem.FileSystem
    const realDir = yield* fs.realPath(dir)
    if (!(yield* git.isRepoRoot(dir, realDir))) yield* git.run(dir, ["init", "-q"])
    const committed = yield* git.commit(dir, files, `kern: initialize agent ${name}`, name)
    return committed ? { status: "committed" as const } : { status: "unchanged" as const }
  }).pipe(
    Effect.catchAll((error) =>
      Effect.succeed({
        status: "skipped" as const,
        detail: error._tag === "GitError" ? error.message : `could not inspect ${dir}: ${error.message}`
      })
    )
  )
