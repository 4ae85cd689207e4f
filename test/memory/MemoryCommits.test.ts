import { NodeContext } from "@effect/platform-node"
import { assert, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope, TestClock } from "effect"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as AgentConfig from "../../src/config/AgentConfig.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { commitMessage, MemoryCommits, parsePorcelain } from "../../src/memory/MemoryCommits.js"
import * as MemoryCommitsLayer from "../../src/memory/MemoryCommits.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { eventually } from "../support/waitFor.js"

const git = (dir: string, ...args: ReadonlyArray<string>) =>
  NodeChildProcess.execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir, encoding: "utf8" })

/** An agent folder in a git repository with a first commit, and `config` as its config.json. */
const agentRepo = (config: Record<string, unknown> = {}) => {
  const dir = NodeFs.realpathSync(makeTempDir("kern-commits-"))
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({ name: "atlas", ...config }),
    "AGENTS.md": "# agents\n",
    "notes/2026-01-01.md": "day one\n",
    "knowledge/old.md": "old\n"
  })
  git(dir, "init", "-q", "-b", "main")
  git(dir, "add", "AGENTS.md", "notes", "knowledge")
  git(dir, "commit", "-q", "-m", "init")
  return dir
}

const commits = (dir: string) => git(dir, "log", "--format=%s").trim().split("\n")
const filesOf = (dir: string, rev = "HEAD") =>
  git(dir, "show", "--name-only", "--format=", rev).trim().split("\n").filter((line) => line !== "").sort()

/** MemoryCommits in a scope of its own (closed = shutdown), its warnings collected. */
const open = (dir: string) =>
  Effect.gen(function*() {
    const warnings: Array<string> = []
    const scope = yield* Scope.make()
    const platform = Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, {}))
    const layer = MemoryCommitsLayer.layer((line) => Effect.sync(() => warnings.push(line))).pipe(
      Layer.provide(AgentConfig.layer(dir)),
      Layer.provide(platform),
      Layer.orDie
    )
    const context = yield* Layer.buildWithScope(layer, scope)
    const memory = Context.get(context, MemoryCommits)
    return { memory, warnings, shutdown: Scope.close(scope, Exit.void) }
  })

// `eventually` waits in real time: a flush runs in a fiber of its own after the TestClock moves.

describe("memory commits", () => {
  it.effect("a .kern/ an older init committed is untracked once, with a line; the files stay and git status is clean", () =>
    Effect.gen(function*() {
      const dir = agentRepo()
      // What `kern init` used to do: config.json committed, .gitignore without .kern/.
      writeFiles(dir, { ".gitignore": "*.db\n.kern/.env\n" })
      git(dir, "add", ".gitignore", ".kern/config.json")
      git(dir, "commit", "-q", "-m", "old init")
      writeFiles(dir, { ".kern/config.json": JSON.stringify({ name: "atlas", maxSteps: 7 }), "notes/2026-01-02.md": "today\n" })
      expect(git(dir, "status", "--porcelain")).toContain(".kern/config.json")
      const { memory, warnings } = yield* open(dir)
      const committed = yield* memory.commitNow
      expect(committed).toEqual(["notes/2026-01-02.md"])
      expect(git(dir, "ls-files", "--", ".kern").trim()).toBe("")
      expect(JSON.parse(NodeFs.readFileSync(NodePath.join(dir, ".kern/config.json"), "utf8"))).toMatchObject({ maxSteps: 7 })
      expect(NodeFs.readFileSync(NodePath.join(dir, ".gitignore"), "utf8")).toBe("*.db\n.kern/.env\n.kern/\n")
      expect(commits(dir).slice(0, 2)).toEqual(["kern: memory notes/2026-01-02.md", "kern: stop tracking .kern/ (settings and state stay local)"])
      expect(filesOf(dir, "HEAD~1")).toEqual([".gitignore", ".kern/config.json"])
      expect(git(dir, "status", "--porcelain", "--untracked-files=all").trim()).toBe("")
      expect(warnings.filter((line) => line.startsWith("untracked"))).toEqual([
        "untracked .kern/config.json from git: .kern/ is the runtime's own folder and is never committed (the files stay " +
        "where they are; .gitignore now lists .kern/)"
      ])
      // Once: a later commit neither untracks nor says it again.
      writeFiles(dir, { "notes/2026-01-03.md": "next\n" })
      yield* memory.commitNow
      expect(warnings.filter((line) => line.startsWith("untracked"))).toHaveLength(1)
    }))

  it.effect("with the operator's own changes staged, the untracking is staged beside them, never committed with them", () =>
    Effect.gen(function*() {
      const dir = agentRepo()
      git(dir, "add", ".kern/config.json")
      git(dir, "commit", "-q", "-m", "old init")
      writeFiles(dir, { "src/code.ts": "code\n" })
      git(dir, "add", "src/code.ts")
      const { memory, warnings } = yield* open(dir)
      yield* memory.commitNow
      expect(commits(dir)[0]).toBe("old init")
      const staged = git(dir, "diff", "--cached", "--name-status").trim().split("\n").sort()
      expect(staged).toEqual(["A\t.gitignore", "A\tsrc/code.ts", "D\t.kern/config.json"])
      expect(warnings.join("\n")).toContain("the removal is staged beside your own staged changes: commit it with them")
    }))

  it("porcelain -z output and the message", () => {
    expect(parsePorcelain(" M AGENTS.md\u0000?? notes/a b.md\u0000 D knowledge/x.md\u0000")).toEqual(["AGENTS.md", "notes/a b.md", "knowledge/x.md"])
    expect(commitMessage(["AGENTS.md", "notes/2026-01-02.md"])).toBe("kern: memory AGENTS.md, notes/2026-01-02.md\n\n- AGENTS.md\n- notes/2026-01-02.md\n")
    expect(commitMessage(Array.from({ length: 9 }, (_, i) => `knowledge/topic-${i}.md`)).split("\n")[0]).toBe("kern: memory (9 files)")
  })

  it.effect("after a turn: exactly the memory files (new, changed, deleted), nothing from .kern/ or elsewhere", () =>
    Effect.gen(function*() {
      const dir = agentRepo()
      writeFiles(dir, {
        "AGENTS.md": "# agents, changed\n",
        "notes/2026-01-02.md": "today\n",
        "knowledge/deep/host.md": "a host\n",
        ".kern/notes.md": "not memory\n",
        ".kern/kern.db": "db",
        "src/code.ts": "code\n",
        "docs/README.md": "not at the root\n"
      })
      NodeFs.rmSync(NodePath.join(dir, "knowledge/old.md"))
      git(dir, "add", "src/code.ts") // staged by the operator: stays staged, out of kern's commit
      const { memory, warnings } = yield* open(dir)
      const committed = yield* memory.commitNow
      expect([...committed].sort()).toEqual(["AGENTS.md", "knowledge/deep/host.md", "knowledge/old.md", "notes/2026-01-02.md"])
      expect(filesOf(dir)).toEqual(["AGENTS.md", "knowledge/deep/host.md", "knowledge/old.md", "notes/2026-01-02.md"])
      expect(git(dir, "log", "-1", "--format=%B")).toContain("- knowledge/old.md")
      const status = git(dir, "status", "--porcelain", "--untracked-files=all")
      expect(status).toContain("A  src/code.ts")
      expect(status).toContain("?? .kern/notes.md")
      expect(status).toContain("?? docs/README.md")
      expect(warnings).toEqual([])
      expect(yield* memory.commitNow).toEqual([])
    }))

  it.effect("at most one commit a minute while turns continue; the last change is committed when the minute is up", () =>
    Effect.gen(function*() {
      const dir = agentRepo()
      const { memory } = yield* open(dir)
      writeFiles(dir, { "notes/2026-01-02.md": "turn 1\n" })
      yield* memory.afterTurn
      expect(commits(dir)).toHaveLength(2)
      for (let turn = 2; turn <= 4; turn++) {
        yield* TestClock.adjust("10 seconds")
        writeFiles(dir, { "notes/2026-01-02.md": `turn ${turn}\n` })
        yield* memory.afterTurn
      }
      expect(commits(dir)).toHaveLength(2)
      yield* TestClock.adjust("30 seconds")
      assert.isTrue(yield* eventually(() => commits(dir).length === 3))
      expect(git(dir, "show", "HEAD:notes/2026-01-02.md")).toBe("turn 4\n")
      yield* TestClock.adjust("5 minutes")
      expect(commits(dir)).toHaveLength(3)
    }))

  it.effect("shutdown commits what is left, hand edits included", () =>
    Effect.gen(function*() {
      const dir = agentRepo()
      const { memory, shutdown } = yield* open(dir)
      writeFiles(dir, { "notes/2026-01-02.md": "a\n" })
      yield* memory.afterTurn
      writeFiles(dir, { "KNOWLEDGE.md": "# by hand\n" })
      yield* shutdown
      expect(commits(dir)).toHaveLength(3)
      expect(filesOf(dir)).toEqual(["KNOWLEDGE.md"])
    }))

  it.effect("a detached head: a warning with the fix, no commit, nothing lost; committed once back on a branch", () =>
    Effect.gen(function*() {
      const dir = agentRepo()
      git(dir, "checkout", "-q", "--detach")
      const { memory, warnings } = yield* open(dir)
      writeFiles(dir, { "notes/2026-01-02.md": "kept\n" })
      expect(yield* memory.commitNow).toEqual([])
      expect(yield* memory.commitNow).toEqual([])
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toContain("HEAD is detached")
      expect(warnings[0]).toContain("git switch main")
      expect(commits(dir)).toHaveLength(1)
      expect(NodeFs.readFileSync(NodePath.join(dir, "notes/2026-01-02.md"), "utf8")).toBe("kept\n")
      git(dir, "switch", "-q", "main")
      expect(yield* memory.commitNow).toEqual(["notes/2026-01-02.md"])
    }))

  it.effect("a lock held by another git process, and no repository at all: warnings, never a failure", () =>
    Effect.gen(function*() {
      const dir = agentRepo()
      NodeFs.writeFileSync(NodePath.join(dir, ".git/index.lock"), "")
      const { memory, warnings } = yield* open(dir)
      writeFiles(dir, { "notes/2026-01-02.md": "x\n" })
      expect(yield* memory.commitNow).toEqual([])
      expect(warnings.join("\n")).toContain(".git/index.lock")
      NodeFs.rmSync(NodePath.join(dir, ".git/index.lock"))
      expect(yield* memory.commitNow).toEqual(["notes/2026-01-02.md"])

      const plain = NodeFs.realpathSync(makeTempDir("kern-norepo-"))
      writeFiles(plain, { ".kern/config.json": "{}", "notes/2026-01-02.md": "x\n" })
      const bare = yield* open(plain)
      expect(yield* bare.memory.commitNow).toEqual([])
      expect(bare.warnings[0]).toContain("is not a git repository")
      expect(bare.warnings[0]).toContain("git init")
    }))

  it.effect("no git identity: committed under the agent's name, with a warning saying how to set one", () =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        const saved = { global: process.env["GIT_CONFIG_GLOBAL"], system: process.env["GIT_CONFIG_NOSYSTEM"] }
        process.env["GIT_CONFIG_GLOBAL"] = "/dev/null"
        process.env["GIT_CONFIG_NOSYSTEM"] = "1"
        return saved
      }),
      () =>
        Effect.gen(function*() {
          const dir = agentRepo()
          const { memory, warnings } = yield* open(dir)
          writeFiles(dir, { "notes/2026-01-02.md": "x\n" })
          expect(yield* memory.commitNow).toEqual(["notes/2026-01-02.md"])
          expect(git(dir, "log", "-1", "--format=%an <%ae>").trim()).toBe("atlas <atlas@kern.local>")
          expect(warnings[0]).toContain("git config user.name")
        }),
      (saved) =>
        Effect.sync(() => {
          for (const [key, value] of [["GIT_CONFIG_GLOBAL", saved.global], ["GIT_CONFIG_NOSYSTEM", saved.system]] as const) {
            if (value === undefined) delete process.env[key]
            else process.env[key] = value
          }
        })
    ))

  it.effect("autoCommit false: nothing is committed", () =>
    Effect.gen(function*() {
      const dir = agentRepo({ autoCommit: false })
      const { memory, shutdown } = yield* open(dir)
      writeFiles(dir, { "notes/2026-01-02.md": "x\n" })
      yield* memory.afterTurn
      yield* shutdown
      expect(commits(dir)).toHaveLength(1)
    }))
})
