import { NodeContext } from "@effect/platform-node"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import { describe, expect, it } from "@effect/vitest"
import { Context, type Duration, Effect, Exit, Layer, Scope } from "effect"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as AgentConfig from "../../src/config/AgentConfig.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { Git } from "../../src/memory/Git.js"
import { make, MemoryCommits } from "../../src/memory/MemoryCommits.js"
import { memoryFingerprint } from "../../src/memory/memoryFingerprint.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

// A turn after which nothing git looks at changed since git last found nothing to commit starts no git process
// (memoryFingerprint.ts). Real clock, real git: each change below must bring git back.

const git = (dir: string, ...args: ReadonlyArray<string>) =>
  NodeChildProcess.execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir, encoding: "utf8" })

const agentFolder = () => {
  const dir = NodeFs.realpathSync(makeTempDir("kern-settled-"))
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({ name: "atlas" }),
    "AGENTS.md": "# agents\n",
    "notes/2026-01-01.md": "day one\n",
    "knowledge/old.md": "old\n"
  })
  return dir
}

const agentRepo = () => {
  const dir = agentFolder()
  git(dir, "init", "-q", "-b", "main")
  git(dir, "add", "AGENTS.md", "notes", "knowledge")
  git(dir, "commit", "-q", "-m", "init")
  return dir
}

/** MemoryCommits over a Git that counts the processes it starts; `trustAfter` 0: a check is trusted at once. */
const open = (dir: string, trustAfter: Duration.DurationInput = 0) =>
  Effect.gen(function*() {
    const counted = { git: 0 }
    const countingGit = Layer.effect(
      Git,
      Effect.map(Git, (real) =>
        new Git({
          ...real,
          exec: (at, args) => Effect.suspend(() => (counted.git++, real.exec(at, args))),
          run: (at, args) => Effect.suspend(() => (counted.git++, real.run(at, args))),
          isRepoRoot: (at, realDir) => Effect.suspend(() => (counted.git++, real.isRepoRoot(at, realDir)))
        }))
    ).pipe(Layer.provide(Git.Default), Layer.provide(NodeCommandExecutor.layer))
    const scope = yield* Scope.make()
    const layer = Layer.scoped(MemoryCommits, make(() => Effect.void, trustAfter)).pipe(
      Layer.provide(countingGit),
      Layer.provide(AgentConfig.layer(dir)),
      Layer.provide(Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, {}))),
      Layer.orDie
    )
    const memory = Context.get(yield* Layer.buildWithScope(layer, scope), MemoryCommits)
    return { memory, counted, shutdown: Scope.close(scope, Exit.void) }
  })

const head = (dir: string, file: string) => git(dir, "show", `HEAD:${file}`)
const inHead = (dir: string, file: string) => git(dir, "ls-tree", "-r", "--name-only", "HEAD").split("\n").includes(file)

describe("memory commits after a clean check", () => {
  it.live("a turn that changed nothing starts no git process; the scope's last commit still asks git", () =>
    Effect.gen(function*() {
      const dir = agentRepo()
      const { counted, memory, shutdown } = yield* open(dir)
      expect(yield* memory.commitNow).toEqual([])
      const asked = counted.git
      expect(asked).toBeGreaterThan(0)
      yield* memory.afterTurn
      yield* memory.afterTurn
      expect(counted.git).toBe(asked)
      yield* shutdown
      expect(counted.git).toBeGreaterThan(asked)
    }))

  const changes: ReadonlyArray<readonly [string, (dir: string) => void, (dir: string) => void]> = [
    ["a memory file edited by hand, same size", (dir) => writeFiles(dir, { "notes/2026-01-01.md": "day two\n" }), (dir) => {
      expect(head(dir, "notes/2026-01-01.md")).toBe("day two\n")
    }],
    ["a new file in a new folder", (dir) => writeFiles(dir, { "notes/trips/rome.md": "rome\n" }), (dir) => {
      expect(head(dir, "notes/trips/rome.md")).toBe("rome\n")
    }],
    ["a new Markdown file at the root", (dir) => writeFiles(dir, { "USER.md": "user\n" }), (dir) => {
      expect(head(dir, "USER.md")).toBe("user\n")
    }],
    ["a memory file removed", (dir) => NodeFs.rmSync(NodePath.join(dir, "knowledge/old.md")), (dir) => {
      expect(inHead(dir, "knowledge/old.md")).toBe(false)
    }],
    ["a file made the same as before (same size, its time put back)", (dir) => {
      const file = NodePath.join(dir, "knowledge/old.md")
      const { atime, mtime } = NodeFs.statSync(file)
      NodeFs.writeFileSync(file, "new\n")
      NodeFs.utimesSync(file, atime, mtime)
    }, (dir) => {
      expect(head(dir, "knowledge/old.md")).toBe("new\n")
    }]
  ]
  for (const [name, change, committed] of changes) {
    it.live(`${name}: the next turn commits it`, () =>
      Effect.gen(function*() {
        const dir = agentRepo()
        const { counted, memory } = yield* open(dir)
        expect(yield* memory.commitNow).toEqual([])
        const asked = counted.git
        change(dir)
        yield* memory.afterTurn
        expect(counted.git).toBeGreaterThan(asked)
        committed(dir)
        expect(git(dir, "status", "--porcelain", "--untracked-files=all", "--", "*.md", "notes", "knowledge").trim()).toBe("")
      }))
  }

  const gitChanges: ReadonlyArray<readonly [string, (dir: string) => void]> = [
    ["the index changed by the operator (a file unstaged)", (dir) => git(dir, "rm", "-q", "--cached", "notes/2026-01-01.md")],
    ["the branch moved by the operator", (dir) => {
      writeFiles(dir, { "src/code.ts": "x\n" })
      git(dir, "add", "src/code.ts")
      git(dir, "commit", "-q", "-m", "code")
    }],
    ["HEAD detached by the operator", (dir) => git(dir, "checkout", "-q", "--detach")],
    ["a .gitignore added", (dir) => writeFiles(dir, { ".gitignore": "*.tmp\n" })]
  ]
  for (const [name, change] of gitChanges) {
    it.live(`${name}: the next turn asks git again`, () =>
      Effect.gen(function*() {
        const dir = agentRepo()
        const { counted, memory } = yield* open(dir)
        expect(yield* memory.commitNow).toEqual([])
        const asked = counted.git
        yield* memory.afterTurn
        expect(counted.git).toBe(asked)
        change(dir)
        yield* memory.afterTurn
        expect(counted.git).toBeGreaterThan(asked)
      }))
  }

  it.live("a folder that was no repository: after `git init` the next turn commits its memory", () =>
    Effect.gen(function*() {
      const dir = agentFolder()
      const { counted, memory } = yield* open(dir)
      expect(yield* memory.commitNow).toEqual([])
      const asked = counted.git
      yield* memory.afterTurn
      expect(counted.git).toBe(asked)
      git(dir, "init", "-q", "-b", "main")
      yield* memory.afterTurn
      expect(inHead(dir, "AGENTS.md")).toBe(true)
      expect(inHead(dir, "notes/2026-01-01.md")).toBe(true)
    }))

  it.live("a check over files changed moments before is not trusted: the next turn asks git again", () =>
    Effect.gen(function*() {
      const dir = agentRepo()
      // Every file here was written within the settling time.
      const { counted, memory } = yield* open(dir, "1 hour")
      expect(yield* memory.commitNow).toEqual([])
      const asked = counted.git
      yield* memory.afterTurn
      expect(counted.git).toBeGreaterThan(asked)
    }))

  it("no fingerprint where `.git` is a file (a worktree, a submodule): git is asked every time", () => {
    const dir = agentFolder()
    NodeFs.writeFileSync(NodePath.join(dir, ".git"), "gitdir: /elsewhere\n")
    expect(memoryFingerprint(dir)).toBeUndefined()
  })
})
