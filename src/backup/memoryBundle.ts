import { Effect } from "effect"
import * as NodeFs from "node:fs"
import { Git } from "../memory/Git.js"
import { BackupError, describe } from "./BackupError.js"

const gitFailed = (what: string) => (error: unknown) => new BackupError({ reason: "git", message: `${what}: ${describe(error)}` })

export interface BundleReport {
  readonly head: string
  readonly commits: number
  /** Tracked files changed and files git does not know yet: not in the bundle. */
  readonly uncommitted: number
}

/**
 * `git bundle create TARGET --all` of the agent folder's own repository: every branch and tag with its history. The
 * folder must be the top of a repository with a commit.
 */
export const createBundle = Effect.fn("kern.backup.createBundle")(function*(dir: string, target: string) {
  const git = yield* Git
  const real = NodeFs.realpathSync(dir)
  if (!(yield* git.isRepoRoot(dir, real).pipe(Effect.mapError(gitFailed("git could not be asked about the memory repository"))))) {
    return yield* new BackupError({
      reason: "git",
      message: `${dir} has no git repository of its own: kern backs the memory files up as a git bundle. ` +
        `Make one first: git -C ${dir} init && git -C ${dir} add -A && git -C ${dir} commit -m memory`
    })
  }
  const head = (yield* git.run(dir, ["rev-parse", "--verify", "-q", "HEAD"]).pipe(
    Effect.mapError(() =>
      new BackupError({ reason: "git", message: `the memory repository in ${dir} has no commit yet: commit the memory files first` })
    )
  )).trim()
  const commits = Number((yield* git.run(dir, ["rev-list", "--count", "--all"]).pipe(Effect.mapError(gitFailed("git rev-list failed")))).trim())
  const status = yield* git.run(dir, ["status", "--porcelain"]).pipe(Effect.mapError(gitFailed("git status failed")))
  yield* git.run(dir, ["bundle", "create", target, "--all"]).pipe(Effect.mapError(gitFailed("git could not bundle the memory repository")))
  return { head, commits, uncommitted: status.split("\n").filter((line) => line.trim() !== "").length } satisfies BundleReport
})

/** The refs a bundle holds (`git bundle list-heads`): name → commit. */
const headsOf = (git: Git, cwd: string, bundle: string) =>
  git.run(cwd, ["bundle", "list-heads", bundle]).pipe(
    Effect.map((text) =>
      text.split("\n").map((line) => line.trim().split(/\s+/)).filter((parts) => parts.length === 2).map(([sha, ref]) => ({ sha: sha!, ref: ref! }))
    ),
    Effect.mapError(gitFailed("git could not read the bundle"))
  )

/** `git bundle verify` needs a repository to verify against: an empty one in `scratch` (a folder of its own). */
export const verifyBundle = Effect.fn("kern.backup.verifyBundle")(function*(bundle: string, scratch: string) {
  const git = yield* Git
  yield* git.run(scratch, ["init", "-q", "--bare", "."]).pipe(Effect.mapError(gitFailed("git init failed")))
  yield* git.run(scratch, ["bundle", "verify", "-q", bundle]).pipe(Effect.mapError(gitFailed("the memory bundle does not verify")))
  return yield* headsOf(git, scratch, bundle)
})

/**
 * The bundle as `dir`'s repository, its working tree checked out: every branch and tag, HEAD on the branch it was on.
 * `dir` may hold other files (the restore's staging folder), which git leaves alone.
 */
export const restoreBundle = Effect.fn("kern.backup.restoreBundle")(function*(bundle: string, dir: string) {
  const git = yield* Git
  const heads = yield* headsOf(git, dir, bundle)
  const head = heads.find((entry) => entry.ref === "HEAD")
  const branches = heads.filter((entry) => entry.ref.startsWith("refs/heads/"))
  const current = branches.find((entry) => entry.sha === head?.sha && /\/(main|master)$/.test(entry.ref)) ??
    branches.find((entry) => entry.sha === head?.sha) ?? branches[0]
  yield* git.run(dir, ["init", "-q"]).pipe(Effect.mapError(gitFailed("git init failed")))
  yield* git.run(dir, ["fetch", "-q", "--update-head-ok", bundle, "refs/heads/*:refs/heads/*", "refs/tags/*:refs/tags/*"]).pipe(
    Effect.mapError(gitFailed("git could not fetch the memory bundle"))
  )
  if (current !== undefined) {
    yield* git.run(dir, ["symbolic-ref", "HEAD", current.ref]).pipe(Effect.mapError(gitFailed("git symbolic-ref failed")))
  } else if (head !== undefined) {
    yield* git.run(dir, ["update-ref", "--no-deref", "HEAD", head.sha]).pipe(Effect.mapError(gitFailed("git update-ref failed")))
  }
  yield* git.run(dir, ["reset", "-q", "--hard"]).pipe(Effect.mapError(gitFailed("git could not check the memory files out")))
  return { branch: current?.ref.replace("refs/heads/", ""), refs: heads.filter((entry) => entry.ref !== "HEAD").length }
})
