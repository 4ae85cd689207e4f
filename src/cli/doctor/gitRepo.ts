import { Effect, String as Str } from "effect"
import * as NodeFs from "node:fs"
import type { LoadedConfig } from "../../config/AgentConfig.js"
import { Git } from "../../memory/Git.js"
import { type CheckResult, problem, resultOf, warning } from "./Check.js"

/**
 * The memory repository: the folder is its own repository, has a commit, `git status` reads it and `git fsck`
 * (connectivity only: quick) finds every object it needs. Read-only: `--no-optional-locks` keeps status from
 * refreshing the index.
 */
export const gitCheck = (dir: string, loaded: LoadedConfig | undefined): Effect.Effect<CheckResult, { readonly message: string }, Git> =>
  Effect.gen(function*() {
    const git = yield* Git
    const real = NodeFs.realpathSync(dir)
    if (!(yield* git.isRepoRoot(dir, real))) {
      return resultOf("git", [warning(
        `${dir} is not a git repository: the memory has no history${loaded?.config.autoCommit === false ? "" : " and autoCommit does nothing"}`,
        `cd ${dir} && git init && git add -A && git commit -m "memory" (with .kern/ in .gitignore)`
      )], "")
    }
    const head = yield* git.exec(dir, ["--no-optional-locks", "rev-parse", "--verify", "-q", "HEAD"])
    if (head.exitCode !== 0) {
      return resultOf("git", [warning("the memory repository has no commit yet", `cd ${dir} && git add -A && git commit -m "memory"`)], "")
    }
    const status = yield* git.exec(dir, ["--no-optional-locks", "status", "--porcelain"])
    const fsck = yield* git.exec(dir, ["--no-optional-locks", "fsck", "--no-progress", "--connectivity-only"])
    const broken = [status, fsck].filter((output) => output.exitCode !== 0)
    if (broken.length > 0) {
      return resultOf("git", [problem(
        `the memory repository is damaged: ${broken.map((output) => Str.trim(output.stderr).split("\n").slice(0, 3).join(" | ") || `exit ${output.exitCode}`).join("; ")}`,
        `restore the folder from a backup (kern backup verify, kern restore), or repair it with git (git fsck --full in ${dir} says what is missing)`
      )], "")
    }
    const changed = Str.trim(status.stdout) === "" ? 0 : Str.trim(status.stdout).split("\n").length
    return resultOf("git", [], `the memory repository is sound (HEAD ${Str.trim(head.stdout).slice(0, 12)}${changed === 0 ? "" : `, ${changed} uncommitted change${changed === 1 ? "" : "s"}`})`)
  })
