import { FileSystem, Path } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Context, type DateTime, Effect, Layer } from "effect"
import { agentZone } from "../session/envelope.js"
import { AgentConfig } from "../config/AgentConfig.js"
import { type KnownSecret, KnownSecrets } from "../config/KnownSecrets.js"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import type { AgentFileOptions } from "../storage/agentFiles.js"
import { errnoCode, fileFailure } from "./failures.js"

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

/** A path the guard let through: `path` is the real absolute path, `display` what to call it in messages. */
export interface ResolvedPath {
  readonly path: string
  readonly display: string
}

export interface WorkspaceService {
  readonly root: string
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
}

/** What a file tool means to do with a path: writes are held to more than reads. */
export type Access = "read" | "write"

export class Workspace extends Context.Tag("kern/tools/Workspace")<Workspace, WorkspaceService>() {}

const maxSymlinkHops = 40

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

/**
 * Folders file tools treat specially wherever they sit, compared without case (a case-insensitive disk opens `.KERN`
 * as `.kern`): `.kern` is never reached, `.git` only read.
 */
export const protectedDirs = { kern: ".kern", git: ".git" } as const

const loopFailure = (display: string) =>
  toolFailure("VALIDATION_ERROR", `${display}: too many levels of symbolic links (a symlink loop)`)

export const make = Effect.fn("kern.tools.Workspace.make")(function*(options: WorkspaceOptions) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const realOrSelf = (dir: string) => fs.realPath(dir).pipe(Effect.orElseSucceed(() => path.resolve(dir)))
  const lexicalRoots = [options.root, ...(options.extraRoots ?? [])].map((dir) => path.resolve(dir))
  const realRoots = yield* Effect.forEach(lexicalRoots, realOrSelf)
  const root = realRoots[0] ?? path.resolve(options.root)
  const guard = options.guard ?? true
  const childEnv = childEnvOf(options.env ?? {}, options.bashEnv, options.secrets)

  const within = (candidate: string, dirs: ReadonlyArray<string>) =>
    dirs.some((dir) => {
      const rel = path.relative(dir, candidate)
      return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel))
    })

  const display = (absolute: string) => {
    const rel = path.relative(root, absolute)
    return rel === "" ? "." : !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : absolute
  }

  // realpath of a path that may not exist yet: the nearest existing parent is resolved, dangling symlinks followed.
  const realResolve = (absolute: string, shown: string, hops: number): Effect.Effect<string, ToolFailure> =>
    hops > maxSymlinkHops
      ? Effect.fail(loopFailure(shown))
      : fs.realPath(absolute).pipe(
        Effect.catchAll((error: PlatformError): Effect.Effect<string, ToolFailure> => {
          if (errnoCode(error) === "ELOOP") return Effect.fail(loopFailure(shown))
          if (error._tag !== "SystemError" || error.reason !== "NotFound") return Effect.fail(fileFailure(shown)(error))
          return fs.readLink(absolute).pipe(
            Effect.matchEffect({
              onSuccess: (target) => realResolve(path.resolve(path.dirname(absolute), target), shown, hops + 1),
              onFailure: () => {
                const parent = path.dirname(absolute)
                return parent === absolute
                  ? Effect.succeed(absolute)
                  : Effect.map(realResolve(parent, shown, hops), (real) => path.join(real, path.basename(absolute)))
              }
            })
          )
        })
      )

  const allRoots = [...realRoots, ...lexicalRoots]
  /** The folder names of `absolute` below the root that holds it (all of them when no root does), lower-cased. */
  const namesBelowRoot = (absolute: string): ReadonlyArray<string> => {
    const holder = allRoots.find((dir) => within(absolute, [dir]))
    const rel = holder === undefined ? absolute : path.relative(holder, absolute)
    return rel.split(/[\\/]+/).filter((name) => name !== "").map((name) => name.toLowerCase())
  }

  const protectedFailure = (requested: string, absolute: string, access: Access) => {
    const names = namesBelowRoot(absolute)
    if (names.includes(protectedDirs.kern)) {
      return toolFailure(
        "PERMISSION_DENIED",
        `${requested} is under .kern/, which holds kern's config, secrets and database; file tools may not touch it`
      )
    }
    if (access === "write" && names.includes(protectedDirs.git)) {
      return toolFailure(
        "PERMISSION_DENIED",
        `${requested} is under .git/; file tools may read git's files but not write them (a hook or config written there would run as the operator)`
      )
    }
    return undefined
  }

  const resolve = (requested: string, access: Access = "read"): Effect.Effect<ResolvedPath, ToolFailure> =>
    Effect.gen(function*() {
      if (requested.trim() === "") return yield* toolFailure("VALIDATION_ERROR", "path is empty")
      if (requested.includes("\0")) return yield* toolFailure("VALIDATION_ERROR", "path contains a NUL character")
      const absolute = path.resolve(root, requested)
      const outside = () =>
        toolFailure(
          "PERMISSION_DENIED",
          `${requested} is outside the agent folder (${root}); the workspace guard allows only paths inside it`
        )
      if (guard && !within(absolute, [...lexicalRoots, ...realRoots])) return yield* outside()
      // Checked before the real path is looked up too, so a `.kern` that is a symlink elsewhere is still refused.
      const named = protectedFailure(requested, absolute, access)
      if (named !== undefined) return yield* named
      const real = yield* realResolve(absolute, requested, 0)
      const reached = protectedFailure(requested, real, access)
      if (reached !== undefined) return yield* reached
      if (guard && !within(real, realRoots)) {
        return yield* toolFailure(
          "PERMISSION_DENIED",
          `${requested} resolves (through a symlink) to ${real}, outside the agent folder; the workspace guard refuses it`
        )
      }
      return { path: real, display: display(real) }
    }).pipe(Effect.withSpan("kern.tools.Workspace.resolve"))

  return {
    root,
    roots: realRoots,
    guard,
    allowPrivateHosts: options.allowPrivateHosts ?? false,
    artifactsDir: options.artifactsDir ?? path.join(root, ".kern", "artifacts"),
    zone: options.zone ?? agentZone(undefined),
    childEnv,
    resolve,
    display,
    fileOptions: (file, maxBytes) => ({ roots: realRoots, outside: guard ? "refuse" : "allow", maxBytes, display: file.display })
  } satisfies WorkspaceService
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
