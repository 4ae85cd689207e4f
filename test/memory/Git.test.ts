import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Git } from "../../src/memory/Git.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const Live = Git.Default.pipe(Layer.provideMerge(NodeContext.layer))

const plainGit = (dir: string, ...args: ReadonlyArray<string>) =>
  NodeChildProcess.execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir, stdio: "pipe" })

/** A repository with a hook for every step of a commit and an fsmonitor command, each leaving a marker file behind. */
const plantedRepo = () => {
  const dir = NodeFs.realpathSync(makeTempDir("kern-git-"))
  const markers = NodePath.join(makeTempDir("kern-git-markers-"), "ran")
  plainGit(dir, "init", "-q")
  const hook = (name: string) => `#!/bin/sh\necho ${name} >> ${markers}\n`
  writeFiles(dir, {
    "notes/a.md": "a\n",
    ".git/hooks/pre-commit": hook("pre-commit"),
    ".git/hooks/commit-msg": hook("commit-msg"),
    ".git/hooks/post-commit": hook("post-commit"),
    ".git/hooks/fsmonitor": `#!/bin/sh\necho fsmonitor >> ${markers}\nexit 1\n`
  })
  for (const name of ["pre-commit", "commit-msg", "post-commit", "fsmonitor"]) {
    NodeFs.chmodSync(NodePath.join(dir, ".git", "hooks", name), 0o755)
  }
  plainGit(dir, "config", "core.fsmonitor", NodePath.join(dir, ".git", "hooks", "fsmonitor"))
  return { dir, markers }
}

const ran = (markers: string) => (NodeFs.existsSync(markers) ? NodeFs.readFileSync(markers, "utf8").trim().split("\n") : [])

describe("Git: kern's own git commands", () => {
  it("the planted hooks and fsmonitor do run under plain git (so the next test can tell)", () => {
    const { dir, markers } = plantedRepo()
    plainGit(dir, "status")
    plainGit(dir, "add", "notes/a.md")
    plainGit(dir, "commit", "-q", "-m", "plain")
    assert.includeMembers(ran(markers), ["fsmonitor", "pre-commit", "commit-msg", "post-commit"])
  })

  it.effect("commit, status and diff run with hooks and fsmonitor disabled", () =>
    Effect.gen(function*() {
      const { dir, markers } = plantedRepo()
      const git = yield* Git
      const committed = yield* git.commit(dir, ["notes/a.md"], "kern: notes", "kern")
      assert.isTrue(committed)
      yield* git.run(dir, ["status", "--porcelain"])
      yield* git.exec(dir, ["diff", "HEAD"])
      assert.deepStrictEqual(ran(markers), [])
      assert.strictEqual(plainGit(dir, "log", "--format=%s").toString().trim(), "kern: notes")
    }).pipe(Effect.provide(Live)))

  it.effect("a failed command names what the caller ran, not the safety options", () =>
    Effect.gen(function*() {
      const git = yield* Git
      const error = yield* Effect.flip(git.run(makeTempDir("kern-git-none-"), ["log", "-1"]))
      assert.strictEqual(error.command, "log -1")
    }).pipe(Effect.provide(Live)))
})
