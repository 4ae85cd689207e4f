import { FileSystem } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import { Clock, Context, Duration, Effect, FiberSet, Layer, Ref } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { AgentConfig } from "../config/AgentConfig.js"
import { inspectAgentFile, makeSkippedFiles } from "../storage/agentFiles.js"
import { Git, GitError } from "./Git.js"
import { memoryFingerprint } from "./memoryFingerprint.js"

/** The agent's memory: the Markdown files at the root, knowledge/, notes/ and skills/. Never `.kern/`. */
export const memoryPathspecs: ReadonlyArray<string> = [":(glob)*.md", ":(glob)knowledge/**", ":(glob)notes/**", ":(glob)skills/**"]

/** At most one memory commit a minute while turns continue. */
export const commitInterval = Duration.minutes(1)

/**
 * How long a file must have been left alone before a check that found nothing to commit is trusted for it: a file
 * written again within the file system's tick (coarse on some file systems, 2 s on FAT) keeps its times and size.
 */
export const settledAfter = Duration.seconds(3)

/** Where the service's warnings go (stderr in the CLI, the log in a library). */
export type Report = (line: string) => Effect.Effect<void>

/** Paths from `git status --porcelain -z --no-renames`: "XY path" entries separated by NUL. */
export const parsePorcelain = (output: string): ReadonlyArray<string> =>
  output.split("\u0000").filter((entry) => entry.length > 3).map((entry) => entry.slice(3))

/** The commit message: the files in the subject when they fit, always in the body. */
export const commitMessage = (files: ReadonlyArray<string>): string => {
  const listed = files.join(", ")
  const subject = listed.length <= 60 ? `kern: memory ${listed}` : `kern: memory (${files.length} files)`
  return `${subject}\n\n${files.map((file) => `- ${file}`).join("\n")}\n`
}

type Problem = "not-a-repo" | "detached" | "locked" | "identity" | "failed"

/**
 * Commits the memory files after turns (config `autoCommit`): what a turn changed and what the operator changed by
 * hand, only under the memory paths, at most once a minute (a change made sooner is committed when the minute is
 * up), and once more when the scope closes. A repository problem is a warning naming the fix, never a failure and
 * never a lost change: the files stay as they are and the next attempt commits them. A turn after which nothing git
 * looks at has changed since git last found nothing to commit (and that had settled, `trustAfter`) starts no git
 * process (memoryFingerprint.ts); the scope's last commit always asks git.
 */
export const make = (report: Report, trustAfter: Duration.DurationInput = settledAfter) =>
  Effect.gen(function*() {
    const { config, paths } = yield* AgentConfig
    const fs = yield* FileSystem.FileSystem
    const git = yield* Git
    const dir = paths.dir
    const lastCommitMs = yield* Ref.make<number | undefined>(undefined)
    const flushScheduled = yield* Ref.make(false)
    const kernChecked = yield* Ref.make(false)
    const warned = yield* Ref.make<ReadonlySet<Problem>>(new Set())
    const oneAtATime = yield* Effect.makeSemaphore(1)
    const flushes = yield* FiberSet.make()
    const skipped = yield* makeSkippedFiles(report)
    // What git looked at when it last found nothing to commit (memoryFingerprint.ts): while it is the same, a turn
    // starts no git process. Only a settled one is kept (every time older than trustAfter).
    const clean = yield* Ref.make<string | undefined>(undefined)
    const trustMillis = Duration.toMillis(trustAfter)
    const fingerprintNow = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.sync(() => {
        const found = memoryFingerprint(dir)
        return found === undefined || found.newestMs >= now - trustMillis ? undefined : found.text
      }))

    /** Each problem is reported once until a commit succeeds again. */
    const warn = (problem: Problem, text: string) =>
      Effect.flatMap(Ref.modify(warned, (set) => [set.has(problem), new Set([...set, problem])]), (already) =>
        already ? Effect.void : report(`warning: ${text}`))

    /**
     * Whether git may take a changed file: a removed file or a symlink yes (git stores a link as its target's name,
     * never what it points to); any other file only if the door lets it through, so a hard link to `.kern/.env` (git
     * would store its content), a FIFO or an oversized file never enters history. A refused one is reported once.
     */
    const committable = (file: string) =>
      Effect.gen(function*() {
        const kind = yield* Effect.sync(() => NodeFs.lstatSync(NodePath.join(dir, file), { throwIfNoEntry: false }))
        if (kind === undefined || kind.isSymbolicLink()) return true
        return yield* inspectAgentFile(file, { roots: [dir] }).pipe(
          Effect.zipLeft(skipped.readFine(file)),
          Effect.as(true),
          Effect.catchAll((error) => error.reason === "missing" ? Effect.succeed(true) : Effect.as(skipped.skip("autoCommit", error), false))
        )
      })

    const changedFiles = Effect.flatMap(
      git.run(dir, ["status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=all", "--", ...memoryPathspecs]),
      (output) => Effect.filter(parsePorcelain(output).filter((file) => !file.startsWith(".kern/")), committable)
    )

    const identityArgs = Effect.gen(function*() {
      const [name, email] = yield* Effect.all([git.exec(dir, ["config", "user.name"]), git.exec(dir, ["config", "user.email"])])
      if (name.exitCode === 0 && email.exitCode === 0) return []
      const fallback = config.name.replace(/[^A-Za-z0-9._-]/g, "-") || "kern"
      yield* warn(
        "identity",
        `no git identity is configured in ${dir}: memory is committed as "${fallback} <${fallback}@kern.local>"; set ` +
          "yours with `git config user.name \"Your Name\"` and `git config user.email you@example.com`"
      )
      return ["-c", `user.name=${fallback}`, "-c", `user.email=${fallback}@kern.local`]
    })

    const failed = (error: GitError) =>
      /index\.lock|another git process/i.test(error.detail)
        ? warn(
          "locked",
          `another git process holds ${dir}/.git/index.lock: memory changes stay in the folder and are committed ` +
            "after a later turn (if no git is running, remove that stale lock file)"
        )
        : warn(
          "failed",
          `${error.message}: memory changes stay in the folder and are committed after a later turn`
        )

    /**
     * `.kern/` is never part of the agent's history (seed 001), but a folder made by an older `kern init` has
     * `.kern/config.json` committed, shown modified by `git status` forever after. Once per process, before the first
     * memory commit: each tracked file under `.kern/` is untracked (`git rm --cached`, the file stays), `.kern/` is
     * added to .gitignore, and both are committed on their own; when the operator has other changes staged, they are
     * left staged for the operator's next commit instead, and the line says so.
     */
    const untrackKernDir = Effect.gen(function*() {
      if (yield* Ref.get(kernChecked)) return
      const tracked = (yield* git.run(dir, ["ls-files", "-z", "--", ".kern"])).split("\u0000").filter((file) => file !== "")
      // Checked once it is done: a git failure halfway is tried again with the next commit.
      if (tracked.length === 0) return yield* Ref.set(kernChecked, true)
      const ignoreFile = NodePath.join(dir, ".gitignore")
      const ignore = yield* fs.readFileString(ignoreFile).pipe(
        Effect.catchTag("SystemError", (error) => error.reason === "NotFound" ? Effect.succeed("") : Effect.fail(error)),
        Effect.mapError((error) => new GitError({ reason: "failed", command: "read .gitignore", detail: error.message }))
      )
      if (!ignore.split(/\r?\n/).some((line) => line.trim() === ".kern/" || line.trim() === ".kern")) {
        const separated = ignore === "" || ignore.endsWith("\n") ? ignore : `${ignore}\n`
        yield* fs.writeFileString(ignoreFile, `${separated}.kern/\n`).pipe(
          Effect.mapError((error) => new GitError({ reason: "failed", command: "write .gitignore", detail: error.message }))
        )
      }
      yield* git.run(dir, ["rm", "-r", "-q", "--cached", "--", ".kern"])
      yield* git.run(dir, ["add", "--", ".gitignore"])
      const staged = (yield* git.run(dir, ["diff", "--cached", "--name-only", "-z"])).split("\u0000").filter((file) => file !== "")
      const ours = staged.every((file) => file === ".gitignore" || file.startsWith(".kern/"))
      if (ours) {
        const identity = yield* identityArgs
        yield* git.run(dir, [...identity, "commit", "-q", "-m", "kern: stop tracking .kern/ (settings and state stay local)"])
      }
      yield* Ref.set(kernChecked, true)
      yield* report(
        `untracked ${tracked.join(", ")} from git: .kern/ is the runtime's own folder and is never committed (the ` +
          `files stay where they are; .gitignore now lists .kern/)` +
          (ours ? "" : "; the removal is staged beside your own staged changes: commit it with them")
      )
    })

    /** Commits the changed memory files now; returns the files committed. Never fails, never interrupted midway. */
    const commitNow: Effect.Effect<ReadonlyArray<string>> = oneAtATime.withPermits(1)(
      Effect.gen(function*() {
        if (!config.autoCommit) return []
        yield* Ref.set(clean, undefined)
        const realDir = yield* fs.realPath(dir).pipe(Effect.orElseSucceed(() => dir))
        if (!(yield* git.isRepoRoot(dir, realDir))) {
          yield* warn(
            "not-a-repo",
            `${dir} is not a git repository, so memory changes are not committed: run \`git init\` there ` +
              "(or set \"autoCommit\": false in .kern/config.json)"
          )
          yield* Ref.set(clean, yield* fingerprintNow)
          return []
        }
        const head = yield* git.exec(dir, ["symbolic-ref", "-q", "HEAD"])
        if (head.exitCode !== 0) {
          yield* warn(
            "detached",
            `HEAD is detached in ${dir}: memory changes stay uncommitted (nothing is lost) until you check out a ` +
              "branch, e.g. `git switch main`"
          )
          return []
        }
        yield* untrackKernDir
        const files = yield* changedFiles
        if (files.length === 0) {
          yield* Ref.set(clean, yield* fingerprintNow)
          return []
        }
        const identity = yield* identityArgs
        yield* git.run(dir, ["add", "-A", "--", ...files])
        // Only these paths: whatever else the operator staged stays staged and out of kern's commit.
        yield* git.run(dir, [...identity, "commit", "-q", "-m", commitMessage(files), "--", ...files])
        yield* Ref.set(lastCommitMs, yield* Clock.currentTimeMillis)
        yield* Ref.set(warned, new Set())
        return files
      }).pipe(
        Effect.catchAll((error) => Effect.as(failed(error), [])),
        Effect.uninterruptible,
        Effect.withSpan("kern.memory.commit")
      )
    )

    /**
     * After a turn: commits now, or, within a minute of the last commit, once that minute is up (one flush pending
     * at a time), so a burst of turns makes one commit a minute and a quiet agent commits its last turn's changes.
     */
    const afterTurn: Effect.Effect<void> = Effect.gen(function*() {
      if (!config.autoCommit) return
      // Nothing git looks at changed since it last found nothing to commit: no git process this turn.
      const cleanText = yield* Ref.get(clean)
      if (cleanText !== undefined && cleanText === (yield* fingerprintNow)) return
      const now = yield* Clock.currentTimeMillis
      const last = yield* Ref.get(lastCommitMs)
      const dueAt = last === undefined ? now : last + Duration.toMillis(commitInterval)
      if (dueAt <= now) return yield* Effect.asVoid(commitNow)
      if (yield* Ref.getAndSet(flushScheduled, true)) return
      yield* FiberSet.run(
        flushes,
        Effect.sleep(Duration.millis(dueAt - now)).pipe(
          Effect.zipRight(Ref.set(flushScheduled, false)),
          Effect.zipRight(commitNow)
        )
      )
    })

    // At shutdown: a last commit of whatever is left (after a pending flush, if one is running).
    yield* Effect.addFinalizer(() => Effect.asVoid(commitNow))

    return { afterTurn, commitNow } as const
  })

export class MemoryCommits extends Context.Tag("kern/memory/MemoryCommits")<
  MemoryCommits,
  Effect.Effect.Success<ReturnType<typeof make>>
>() {}

/** MemoryCommits over the agent's config, warnings to `report`, git run through Node's child processes. */
export const layer = (report: Report = (line) => Effect.logWarning(line), trustAfter?: Duration.DurationInput): Layer.Layer<
  MemoryCommits,
  never,
  AgentConfig | FileSystem.FileSystem
> =>
  Layer.scoped(MemoryCommits, make(report, trustAfter)).pipe(
    Layer.provide(Git.Default),
    Layer.provide(NodeCommandExecutor.layer)
  )

