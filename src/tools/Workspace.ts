import { FileSystem, Path } from "@effect/platform"
import { Context, type DateTime, Effect, Layer } from "effect"
import { agentZone } from "../session/envelope.js"
import { AgentConfig } from "../config/AgentConfig.js"
import { type KnownSecret, KnownSecrets } from "../config/KnownSecrets.js"
import { confinedAudience, sharedDirName } from "../kernel/Audience.js"
import type { RunContextData } from "../kernel/RunContext.js"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import type { AgentFileOptions } from "../storage/agentFiles.js"
import { fileFailure } from "./failures.js"
import { type Access, makePathGuard, type ResolvedPath } from "./pathGuard.js"

export { type Access, protectedDirs, type ResolvedPath } from "./pathGuard.js"

export interface WorkspaceOptions {
  /** The agent folder: relative paths resolve here, bash runs here. */
  readonly root: string
  /** Further folders the file tools may reach while the guard is on. */
  readonly extraRoots?: ReadonlyArray<string>
  /** The workspace guard (config `workspaceGuard`, on by default). */
  readonly guard?: boolean
  /** The environment the agent sees (inherited + `.kern/.env`); child processes get only part of it. */
  readonly env?: Readonly<Record<string, string>>
  /** Further variables child processes inherit besides the minimal set (config `bashEnv`). */
  readonly bashEnv?: ReadonlyArray<string>
  /** Secrets child processes never get, even when `bashEnv` names them (KnownSecrets). */
  readonly secrets?: ReadonlyArray<KnownSecret>
  /** Let webfetch reach loopback, private and link-local addresses (tests; trusted local setups). */
  readonly allowPrivateHosts?: boolean
  /** Where artifacts live; `<root>/.kern/artifacts` unless given. */
  readonly artifactsDir?: string
  /** The agent's zone (config `timezone`), for the dates of daily notes; the host's unless given. */
  readonly zone?: DateTime.TimeZone
}

export interface WorkspaceService {
  /** Where relative paths start and bash runs: the agent folder, or `shared/` in a non-operator's conversation. */
  readonly root: string
  /** The agent folder itself (its real path), whichever part of it this workspace reaches: bash's call tags, notes. */
  readonly folder: string
  readonly roots: ReadonlyArray<string>
  readonly guard: boolean
  readonly allowPrivateHosts: boolean
  readonly artifactsDir: string
  /** The agent's zone: which daily note is today's. */
  readonly zone: DateTime.TimeZone
  /** The environment for child processes: the minimal set and the `bashEnv` names, never a known secret. */
  readonly childEnv: Readonly<Record<string, string>>
  /**
   * Resolves a path the model named, refusing (when guarded) anything that lands outside the roots, always anything
   * under `.kern/`, and for `"write"` anything under `.git/`, checked on the path as named and on its real path.
   */
  readonly resolve: (path: string, access?: Access) => Effect.Effect<ResolvedPath, ToolFailure>
  /** How to name an absolute path to the model: relative to the root when inside it. */
  readonly display: (absolute: string) => string
  /**
   * How the file tools open a resolved file: through the door every reader of the agent's files uses
   * (src/storage/agentFiles.ts), within these roots (anywhere but `.kern/` when the guard is off), up to `maxBytes`.
   */
  readonly fileOptions: (file: ResolvedPath, maxBytes: number) => AgentFileOptions
  /**
   * The workspace a run's file tools get (builtins.ts provides it to every built-in call): this one for a run that
   * sees everything (Audience.ts) or whose user's memory reach is `all`; otherwise `shared/` alone, relative paths
   * starting there, bash running there, everything outside refused whatever workspaceGuard says.
   */
  readonly forRun: (ctx: Pick<RunContextData, "audience">) => Effect.Effect<WorkspaceService, ToolFailure>
}

export class Workspace extends Context.Tag("kern/tools/Workspace")<Workspace, WorkspaceService>() {}

/** What a shell needs to behave like the operator's; provider keys and tokens are not among them. */
export const minimalEnvNames: ReadonlyArray<string> = ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TERM", "TZ", "TMPDIR"]

/**
 * The environment a tool's child process gets: the minimal names, every `LC_*`, and the names the operator lists
 * in `bashEnv`. An allowlist, because the operator's shell holds keys kern never heard of. A variable holding a
 * secret kern itself reads (`.kern/.env`, the provider key, its tokens) is left out whatever its name: a command could
 * send `$KEY` where the argument check cannot see it.
 */
export const childEnvOf = (
  env: Readonly<Record<string, string>>,
  extraNames: ReadonlyArray<string> = [],
  secrets: ReadonlyArray<KnownSecret> = []
): Record<string, string> => {
  const allowed = new Set([...minimalEnvNames, ...extraNames])
  // kern's own secrets are withheld; a shell variable named like a secret passes only where bashEnv names it.
  const own = secrets.filter((secret) => secret.origin === "agent")
  const secretNames = new Set(own.map((secret) => secret.name))
  const secretValues = new Set(own.map((secret) => secret.value))
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(env)) {
    if ((allowed.has(key) || key.startsWith("LC_")) && !secretNames.has(key) && !secretValues.has(value)) out[key] = value
  }
  return out
}

const confinedTo = (dir: string) => ({
  outside: (requested: string) =>
    `${requested} is outside ${sharedDirName}/, the folder the operator shares with other users; in this conversation ` +
    `file tools reach only ${sharedDirName}/ (${dir}), and relative paths start there`,
  escapes: (requested: string, real: string) =>
    `${requested} resolves (through a symlink) to ${real}, outside ${sharedDirName}/; in this conversation file tools ` +
    `reach only ${sharedDirName}/`
})

export const make = Effect.fn("kern.tools.Workspace.make")(function*(options: WorkspaceOptions) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const realOrSelf = (dir: string) => fs.realPath(dir).pipe(Effect.orElseSucceed(() => path.resolve(dir)))
  const lexicalRoots = [options.root, ...(options.extraRoots ?? [])].map((dir) => path.resolve(dir))
  const realRoots = yield* Effect.forEach(lexicalRoots, realOrSelf)
  const root = realRoots[0] ?? path.resolve(options.root)
  const guard = options.guard ?? true
  const folder = makePathGuard(fs, path, {
    lexical: lexicalRoots,
    real: realRoots,
    guard,
    outside: (requested) =>
      `${requested} is outside the agent folder (${root}); the workspace guard allows only paths inside it`,
    escapes: (requested, real) =>
      `${requested} resolves (through a symlink) to ${real}, outside the agent folder; the workspace guard refuses it`
  })
  const common = {
    folder: root,
    allowPrivateHosts: options.allowPrivateHosts ?? false,
    artifactsDir: options.artifactsDir ?? path.join(root, ".kern", "artifacts"),
    zone: options.zone ?? agentZone(undefined),
    childEnv: childEnvOf(options.env ?? {}, options.bashEnv, options.secrets)
  }

  /**
   * `shared/` as a workspace of its own, guarded whatever the config's workspaceGuard says: created when an agent
   * folder from before it lacks it; refused when it is a symlink (it could lead anywhere, into notes/ too).
   */
  const sharedDir = path.join(root, sharedDirName)
  const refuseShared = (detail: string) =>
    toolFailure(
      "PERMISSION_DENIED",
      `${sharedDirName}/ in the agent folder ${detail}; the operator shares files with other users only through a real ` +
        `${sharedDirName}/ folder, so file tools are not available in this conversation until it is one`
    )
  const shared: Effect.Effect<WorkspaceService, ToolFailure> = Effect.gen(function*() {
    const failed = fileFailure(`${sharedDirName}/`)
    const found = yield* fs.stat(sharedDir).pipe(
      Effect.map((info) => info.type),
      Effect.catchTag("SystemError", (error) => error.reason === "NotFound" ? Effect.succeed("missing") : Effect.fail(error)),
      Effect.mapError(failed)
    )
    if (found === "missing") yield* fs.makeDirectory(sharedDir, { recursive: true }).pipe(Effect.mapError(failed))
    else if (found !== "Directory") return yield* refuseShared("is not a folder")
    // The agent folder's root is a real path, so a `shared` that is a link (or under one) has another real path.
    const real = yield* fs.realPath(sharedDir).pipe(Effect.mapError(failed))
    if (real !== sharedDir) return yield* refuseShared(`is a symbolic link (to ${real})`)
    const confined = makePathGuard(fs, path, { lexical: [sharedDir], real: [real], guard: true, ...confinedTo(real) })
    const service: WorkspaceService = { ...common, ...confined, roots: [real], guard: true, forRun: () => Effect.succeed(service) }
    return service
  }).pipe(Effect.withSpan("kern.tools.Workspace.shared"))

  const whole: WorkspaceService = {
    ...common,
    ...folder,
    root,
    roots: realRoots,
    guard,
    forRun: (ctx) => confinedAudience(ctx)?.memory === "shared" ? shared : Effect.succeed(whole)
  }
  return whole
})

/** The workspace of the loaded agent folder. */
export const layer: Layer.Layer<Workspace, never, AgentConfig | KnownSecrets | FileSystem.FileSystem | Path.Path> =
  Layer.effect(
    Workspace,
    Effect.gen(function*() {
      const loaded = yield* AgentConfig
      const { secrets } = yield* KnownSecrets
      return yield* make({
        root: loaded.paths.dir,
        guard: loaded.config.workspaceGuard,
        env: loaded.env,
        bashEnv: loaded.config.bashEnv,
        secrets,
        artifactsDir: loaded.paths.artifactsDir,
        zone: agentZone(loaded.config.timezone)
      })
    })
  )

/** A workspace over `root` for tests and embedding apps. */
export const layerTest = (
  root: string,
  options: Omit<WorkspaceOptions, "root"> = {}
): Layer.Layer<Workspace, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(Workspace, make({ ...options, root }))
