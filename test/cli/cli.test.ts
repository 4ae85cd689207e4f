import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { runKern } from "../support/cli.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const StatusJson = Schema.Struct({
  dir: Schema.String,
  name: Schema.String,
  provider: Schema.String,
  model: Schema.NullOr(Schema.String),
  agentFolder: Schema.Boolean,
  problems: Schema.Array(Schema.String),
  dbBytes: Schema.Number
})

const nonEmptyLines = (text: string) => text.split("\n").filter((line) => line.trim() !== "")

describe("kern CLI", () => {
  it("--help lists the commands that exist, and nothing that is not built", () => {
    const result = runKern(["--help"])
    expect(result.status).toBe(0)
    expect(result.stdout).toMatch(/- init /)
    expect(result.stdout).toMatch(/- status /)
    for (const built of ["run", "chat", "tui", "sessions list", "kernel info", "kernel exec", "runtime-guard snapshot"]) {
      expect(result.stdout).toContain(`- ${built} `)
    }
    expect(result.stdout).not.toMatch(/- (recall|context|segments|pair|users) /)
  })

  it("--version prints the package version", () => {
    const result = runKern(["--version"])
    expect(result.status).toBe(0)
    const pkg = JSON.parse(NodeFs.readFileSync("package.json", "utf8"))
    expect(result.stdout.trim()).toBe(`v${pkg.version}`)
  })

  it("a bad flag exits 2 with one message and the command's usage, no stack trace", () => {
    const result = runKern(["status", "--frobnicate"])
    expect(result.status).toBe(2)
    expect(result.stdout).toBe("")
    const lines = nonEmptyLines(result.stderr)
    expect(lines).toHaveLength(2)
    expect(lines[0]).toContain("--frobnicate")
    expect(lines[1]).toMatch(/^Usage: kern status/)
    expect(result.stderr).not.toMatch(/\bat .*\.js:\d+/)
  })

  it("an unknown command exits 2 with one message and the usage", () => {
    const result = runKern(["frobnicate"])
    expect(result.status).toBe(2)
    const lines = nonEmptyLines(result.stderr)
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/init.*status/)
    expect(lines[1]).toMatch(/^Usage: kern/)
  })

  it("init without a folder is a usage error, and writes nothing", () => {
    const cwd = makeTempDir()
    const result = runKern(["init"], { cwd })
    expect(result.status).toBe(2)
    expect(nonEmptyLines(result.stderr)).toEqual(["kern: init needs a folder: kern init <dir> (use `kern init .` for this one)"])
    expect(NodeFs.readdirSync(cwd)).toEqual([])
  })

  it("init creates an agent; a second init is refused with exit 2 and one line", () => {
    const cwd = makeTempDir()
    const first = runKern(["init", "./my-agent", "--model", "openai/gpt-4.1", "--no-git"], { cwd })
    expect(first.status).toBe(0)
    expect(first.stdout).toContain("Created agent \"my-agent\"")
    expect(NodeFs.existsSync(NodePath.join(cwd, "my-agent/AGENTS.md"))).toBe(true)
    const second = runKern(["init", "./my-agent"], { cwd })
    expect(second.status).toBe(2)
    expect(nonEmptyLines(second.stderr)).toHaveLength(1)
    expect(second.stderr).toContain("already an agent folder")
  })

  it("status --json decodes, and reports name, provider, model and problems", () => {
    const cwd = makeTempDir()
    expect(runKern(["init", "atlas", "--model", "m1", "--no-git"], { cwd }).status).toBe(0)
    const result = runKern(["status", "--dir", "atlas", "--json"], { cwd, env: { OPENROUTER_API_KEY: "sk-x" } })
    expect(result.status).toBe(0)
    const status = Schema.decodeUnknownSync(StatusJson)(JSON.parse(result.stdout))
    expect(status).toMatchObject({ name: "atlas", provider: "openrouter", model: "m1", agentFolder: true, problems: [] })
    const noKey = Schema.decodeUnknownSync(StatusJson)(JSON.parse(runKern(["status", "atlas", "--json"], { cwd }).stdout))
    expect(noKey.problems.some((problem) => problem.includes("OPENROUTER_API_KEY"))).toBe(true)
  })

  it("status reports the database size once kern.db exists", () => {
    const cwd = makeTempDir()
    writeFiles(cwd, { "a/.kern/config.json": "{}", "a/.kern/kern.db": "x".repeat(4096) })
    const status = JSON.parse(runKern(["status", "a", "--json"], { cwd }).stdout)
    expect(status.dbBytes).toBe(4096)
  })

  it("a config error exits 2 with exactly one line naming file, key, expected and found", () => {
    const cwd = makeTempDir()
    writeFiles(cwd, { "a/.kern/config.json": JSON.stringify({ maxSteps: "thirty", colour: "blue" }) })
    const result = runKern(["status", "a"], { cwd })
    expect(result.status).toBe(2)
    expect(nonEmptyLines(result.stderr)).toEqual([
      "kern: a/.kern/config.json: key \"maxSteps\": expected a positive integer, found the string \"thirty\""
    ])
  })

  it("unknown keys show up once each among the problems, and the command still works", () => {
    const cwd = makeTempDir()
    writeFiles(cwd, { "a/.kern/config.json": JSON.stringify({ colour: "blue" }) })
    const result = runKern(["status", "a", "--json"], { cwd })
    expect(result.status).toBe(0)
    expect(JSON.parse(result.stdout).problems).toEqual(expect.arrayContaining([expect.stringContaining("\"colour\"")]))
  })

  it("two different folders (positional and --dir) are a usage error", () => {
    const result = runKern(["status", "a", "--dir", "b"], { cwd: makeTempDir() })
    expect(result.status).toBe(2)
    expect(result.stderr).toContain("two folders given")
  })
})
