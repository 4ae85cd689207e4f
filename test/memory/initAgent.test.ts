import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Git } from "../../src/memory/Git.js"
import { initAgent, type InitOptions } from "../../src/memory/initAgent.js"
import { makeTempDir } from "../support/tempDir.js"

const Live = Git.Default.pipe(Layer.provideMerge(NodeContext.layer))
const init = (options: Partial<InitOptions> & { dir: string }) =>
  initAgent({ git: true, force: false, ...options }).pipe(Effect.provide(Live))

const git = (dir: string, ...args: Array<string>) => execFileSync("git", args, { cwd: dir, encoding: "utf8" })
const read = (dir: string, file: string) => NodeFs.readFileSync(NodePath.join(dir, file), "utf8")

describe("initAgent", () => {
  it.effect("writes every memory file with content, config, a private .env and .gitignore, and commits", () =>
    Effect.gen(function*() {
      const dir = NodePath.join(makeTempDir(), "atlas")
      const report = yield* init({ dir, model: "openai/gpt-4.1", provider: "openrouter" })
      assert.strictEqual(report.name, "atlas")
      assert.strictEqual(report.git.status, "committed")
      for (const file of ["AGENTS.md", "IDENTITY.md", "KERN.md", "KNOWLEDGE.md", "USERS.md"]) {
        const text = read(dir, file)
        assert.isAbove(text.length, 200, `${file} has real content`)
        assert.match(text, new RegExp(`^# ${file.replace(".", "\\.")}`), `${file} starts with its title`)
      }
      assert.include(read(dir, "IDENTITY.md"), "**Name:** atlas")
      assert.isTrue(NodeFs.statSync(NodePath.join(dir, "knowledge")).isDirectory())
      assert.isTrue(NodeFs.statSync(NodePath.join(dir, "notes")).isDirectory())
      assert.deepStrictEqual(JSON.parse(read(dir, ".kern/config.json")), {
        name: "atlas",
        provider: "openrouter",
        model: "openai/gpt-4.1"
      })
      assert.strictEqual(NodeFs.statSync(NodePath.join(dir, ".kern/.env")).mode & 0o777, 0o600)
      assert.include(read(dir, ".kern/.env"), "OPENROUTER_API_KEY")
      const ignore = read(dir, ".gitignore")
      for (const line of [".kern/", "*.db"]) {
        assert.include(ignore.split("\n"), line)
      }
      assert.match(git(dir, "log", "--oneline"), /kern: initialize agent atlas/)
      const tracked = git(dir, "ls-files").trim().split("\n").sort()
      assert.deepStrictEqual(tracked, [
        ".gitignore",
        "AGENTS.md",
        "IDENTITY.md",
        "KERN.md",
        "KNOWLEDGE.md",
        "USERS.md",
        "knowledge/.gitkeep",
        "notes/.gitkeep",
        "shared/.gitkeep"
      ])
      assert.strictEqual(git(dir, "status", "--porcelain").trim(), "", "the .env, config and db are ignored or committed")
      // .kern/ is never committed (seed 001: git holds the memory files): a changed setting leaves git status clean.
      NodeFs.writeFileSync(NodePath.join(dir, ".kern/config.json"), JSON.stringify({ model: "other" }))
      assert.strictEqual(git(dir, "status", "--porcelain", "--untracked-files=all").trim(), "")
    }))

  it.effect("flags land in config.json, and embeddings can be turned off", () =>
    Effect.gen(function*() {
      const dir = NodePath.join(makeTempDir(), "x")
      yield* init({
        dir,
        name: "Hermes",
        provider: "openai-compatible",
        model: "qwen",
        baseURL: "http://127.0.0.1:9/v1",
        apiKeyEnv: "MY_KEY",
        embeddingModel: false,
        git: false
      })
      assert.deepStrictEqual(JSON.parse(read(dir, ".kern/config.json")), {
        name: "Hermes",
        provider: "openai-compatible",
        model: "qwen",
        baseURL: "http://127.0.0.1:9/v1",
        apiKeyEnv: "MY_KEY",
        embeddingModel: false,
        autoCommit: false
      })
      assert.include(read(dir, ".kern/.env"), "MY_KEY")
      assert.isFalse(NodeFs.existsSync(NodePath.join(dir, ".git")))
    }))

  it.effect("refuses an existing agent folder without --force, and changes nothing", () =>
    Effect.gen(function*() {
      const dir = NodePath.join(makeTempDir(), "atlas")
      yield* init({ dir })
      const before = read(dir, ".kern/config.json")
      const error = yield* Effect.flip(init({ dir, model: "other" }))
      assert.strictEqual(error._tag, "InitError")
      assert.strictEqual(error.reason, "exists")
      assert.include(error.message, "already an agent folder")
      assert.strictEqual(read(dir, ".kern/config.json"), before)
    }))

  it.effect("--force keeps edited memory, notes, knowledge and secrets, and adds what is missing", () =>
    Effect.gen(function*() {
      const dir = NodePath.join(makeTempDir(), "atlas")
      yield* init({ dir, model: "a" })
      NodeFs.writeFileSync(NodePath.join(dir, "AGENTS.md"), "# my own rules\n")
      NodeFs.writeFileSync(NodePath.join(dir, "notes/2026-11-01.md"), "did things\n")
      NodeFs.writeFileSync(NodePath.join(dir, "knowledge/router.md"), "192.168.1.1\n")
      NodeFs.writeFileSync(NodePath.join(dir, ".kern/.env"), "OPENROUTER_API_KEY=sk-secret\n")
      NodeFs.rmSync(NodePath.join(dir, "KERN.md"))
      const config = JSON.parse(read(dir, ".kern/config.json"))
      NodeFs.writeFileSync(NodePath.join(dir, ".kern/config.json"), JSON.stringify({ ...config, maxSteps: 12 }))

      const report = yield* init({ dir, force: true, model: "b" })
      assert.strictEqual(read(dir, "AGENTS.md"), "# my own rules\n")
      assert.strictEqual(read(dir, "notes/2026-11-01.md"), "did things\n")
      assert.strictEqual(read(dir, "knowledge/router.md"), "192.168.1.1\n")
      assert.strictEqual(read(dir, ".kern/.env"), "OPENROUTER_API_KEY=sk-secret\n")
      assert.include(read(dir, "KERN.md"), "# KERN.md")
      assert.include(report.written, "KERN.md")
      assert.include(report.kept, "AGENTS.md")
      const after = JSON.parse(read(dir, ".kern/config.json"))
      assert.strictEqual(after.model, "b")
      assert.strictEqual(after.maxSteps, 12, "keys the user added survive")
    }))

  it.effect("--force reports only what it changed and never commits the agent's own edits", () =>
    Effect.gen(function*() {
      const dir = NodePath.join(makeTempDir(), "atlas")
      yield* init({ dir, model: "a" })
      git(dir, "rm", "-q", "KERN.md")
      git(dir, "commit", "-qm", "lost KERN.md")
      NodeFs.writeFileSync(NodePath.join(dir, "AGENTS.md"), "# edited by the agent\n")
      const report = yield* init({ dir, force: true })
      assert.deepStrictEqual(report.written, ["KERN.md"])
      assert.include(report.kept, ".kern/config.json")
      assert.strictEqual(report.git.status, "committed")
      assert.deepStrictEqual(git(dir, "show", "--name-only", "--format=", "HEAD").trim().split("\n"), ["KERN.md"])
      assert.strictEqual(git(dir, "status", "--porcelain").trim(), "M AGENTS.md")
    }))

  it.effect("--force on a config.json that is not JSON keeps the old file as a backup", () =>
    Effect.gen(function*() {
      const dir = NodePath.join(makeTempDir(), "atlas")
      yield* init({ dir, git: false })
      NodeFs.writeFileSync(NodePath.join(dir, ".kern/config.json"), "{ broken")
      const report = yield* init({ dir, force: true, git: false })
      assert.strictEqual(read(dir, ".kern/config.json.bak"), "{ broken")
      assert.strictEqual(JSON.parse(read(dir, ".kern/config.json")).name, "atlas")
      assert.isTrue(report.warnings.some((warning) => warning.includes("config.json.bak")))
    }))

  it.effect("git missing: files are written, the commit is skipped with a warning", () =>
    Effect.gen(function*() {
      const dir = NodePath.join(makeTempDir(), "atlas")
      const path = process.env["PATH"]
      process.env["PATH"] = makeTempDir("kern-empty-path-")
      const report = yield* init({ dir }).pipe(Effect.ensuring(Effect.sync(() => {
        process.env["PATH"] = path
      })))
      assert.strictEqual(report.git.status, "skipped")
      assert.isTrue(report.warnings.some((warning) => warning.includes("git is not installed")))
      assert.isTrue(NodeFs.existsSync(NodePath.join(dir, "AGENTS.md")))
    }))
})
