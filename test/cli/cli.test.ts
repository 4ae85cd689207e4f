import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { kernBin, runCollected, runKern } from "../support/cli.js"
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
  it("--help lists the commands that exist, and nothing that is not built", async () => {
    const result = await runKern(["--help"])
    expect(result.status).toBe(0)
    for (const built of ["init", "status", "run", "start", "stop", "restart", "logs", "open", "chat", "tui", "sessions", "recall", "context", "segments", "pair", "users", "kernel", "runtime-guard"]) {
      expect(result.stdout).toMatch(new RegExp(`^  ${built} `, "m"))
    }
    expect(result.stdout).toMatch(/^ {2}approve /m)
    expect(result.stdout).toMatch(/^ {2}deny /m)
    const kernel = await runKern(["kernel", "--help"])
    for (const built of ["info", "namespaces", "tools", "exec"]) expect(kernel.stdout).toMatch(new RegExp(`^  kernel ${built} `, "m"))
  })

  it("help names the command as it is typed, without @effect/cli's boilerplate or colour when piped", async () => {
    const result = await runKern(["chat", "--help"])
    expect(result.status).toBe(0)
    expect(result.stdout).toMatch(/^ {2}kern chat \[--dir text\]/m)
    expect(result.stdout).not.toContain("$ chat")
    for (const boilerplate of ["A user-defined piece of text.", "This setting is optional.", "A true or false value.", "--wizard", "--completions"]) {
      expect(result.stdout).not.toContain(boilerplate)
    }
    expect(result.stdout).toContain("the message to send")
    expect(result.stdout).not.toContain("\u001b")
  })

  it("help on a terminal is coloured unless NO_COLOR or TERM=dumb asks otherwise", async () => {
    // `script` gives kern a pseudo-terminal as stdout.
    const onTty = async (env: Record<string, string>) =>
      (await runCollected("script", ["-qec", `${process.execPath} ${kernBin} status --help`, "/dev/null"], {
        env: { TERM: "xterm", ...env }
      })).stdout
    expect(await onTty({})).toContain("\u001b[1m")
    expect(await onTty({ NO_COLOR: "1" })).not.toContain("\u001b")
    expect(await onTty({ TERM: "dumb" })).not.toContain("\u001b")
  })

  it("--wizard is not offered: exit 2 with the usage", async () => {
    const result = await runKern(["status", "--wizard"])
    expect(result.status).toBe(2)
    expect(result.stderr).toContain("unknown option --wizard")
  })

  it("a mistake in a nested command prints that command's usage, not its parent's", async () => {
    const result = await runKern(["kernel", "exec"])
    expect(result.status).toBe(2)
    expect(result.stderr).toMatch(/^Usage: kern kernel exec .*<toolId> \[<dir>\]/m)
  })

  it("[dir] and --dir work on kernel exec and kernel namespaces", async () => {
    const cwd = makeTempDir()
    expect((await runKern(["init", "a", "--model", "m", "--no-git"], { cwd })).status).toBe(0)
    writeFiles(cwd, { "a/hello.txt": "hi there" })
    const positional = await runKern(["kernel", "exec", "read", "a", "--args", JSON.stringify({ path: "hello.txt" })], { cwd })
    expect(positional.status).toBe(0)
    expect(positional.stdout).toContain("hi there")
    const flag = await runKern(["kernel", "exec", "read", "--dir", "a", "--args", JSON.stringify({ path: "hello.txt" })], { cwd })
    expect(flag.stdout).toContain("hi there")
    expect((await runKern(["kernel", "namespaces", "--dir", "a"], { cwd })).status).toBe(0)
  })

  it("status on a missing or non-agent folder exits 2 with one line", async () => {
    const cwd = makeTempDir()
    writeFiles(cwd, { "plain/readme.txt": "not an agent" })
    for (const dir of ["plain", "missing"]) {
      const result = await runKern(["status", dir], { cwd })
      expect(result.status).toBe(2)
      expect(nonEmptyLines(result.stderr)).toEqual([
        `kern: ${dir} is not an agent folder (no .kern/config.json); run \`kern init ${dir}\` first`
      ])
    }
  })

  it("a baseURL that is not a URL is a config error (exit 2); a bad OPENAI_BASE_URL is a listed problem", async () => {
    const cwd = makeTempDir()
    writeFiles(cwd, { "a/.kern/config.json": JSON.stringify({ model: "m", baseURL: "localhost:11434" }) })
    const result = await runKern(["status", "a"], { cwd })
    expect(result.status).toBe(2)
    expect(nonEmptyLines(result.stderr)).toEqual([
      "kern: a/.kern/config.json: key \"baseURL\": expected an http(s) URL such as \"http://localhost:11434/v1\", found the string \"localhost:11434\""
    ])
    writeFiles(cwd, { "b/.kern/config.json": JSON.stringify({ model: "gpt-4.1", provider: "openai-compatible" }) })
    const env = { OPENAI_BASE_URL: "not a url", OPENAI_API_KEY: "sk-x" }
    const status = JSON.parse((await runKern(["status", "b", "--json"], { cwd, env })).stdout)
    expect(status.problems).toEqual([expect.stringContaining("OPENAI_BASE_URL is not an http(s) URL")])
    const chat = await runKern(["chat", "b", "-m", "hi"], { cwd, env })
    expect(chat.status).toBe(2)
    expect(chat.stderr).toContain("OPENAI_BASE_URL is not an http(s) URL")
  })

  it("a config file nested 100,000 deep is one line and exit 2", async () => {
    const cwd = makeTempDir()
    writeFiles(cwd, { "a/.kern/config.json": `{"budget":${"[".repeat(100_000)}${"]".repeat(100_000)}}` })
    const result = await runKern(["status", "a"], { cwd })
    expect(result.status).toBe(2)
    expect(nonEmptyLines(result.stderr)).toEqual([
      "kern: a/.kern/config.json: expected JSON nested at most 64 levels deep, found deeper nesting"
    ])
  })

  it("status lists a cost cap that cannot work for a model with no price, with the fix", async () => {
    const cwd = makeTempDir()
    writeFiles(cwd, { "a/.kern/config.json": JSON.stringify({ model: "acme/unpriced-1" }) })
    const status = JSON.parse((await runKern(["status", "a", "--json"], { cwd, env: { OPENROUTER_API_KEY: "sk-x" } })).stdout)
    expect(status.problems).toEqual([expect.stringMatching(/"acme\/unpriced-1" has no known price.*"prices"/)])
    writeFiles(cwd, {
      "a/.kern/config.json": JSON.stringify({ model: "acme/unpriced-1", prices: { "acme/unpriced-1": { input: 1, output: 2 } } })
    })
    expect(JSON.parse((await runKern(["status", "a", "--json"], { cwd, env: { OPENROUTER_API_KEY: "sk-x" } })).stdout).problems).toEqual([])
  })

  it("--version prints the package version", async () => {
    const result = await runKern(["--version"])
    expect(result.status).toBe(0)
    const pkg = JSON.parse(NodeFs.readFileSync("package.json", "utf8"))
    expect(result.stdout.trim()).toBe(`v${pkg.version}`)
  })

  it("a bad flag exits 2 with one message and the command's usage, no stack trace", async () => {
    const result = await runKern(["status", "--frobnicate"])
    expect(result.status).toBe(2)
    expect(result.stdout).toBe("")
    const lines = nonEmptyLines(result.stderr)
    expect(lines).toHaveLength(2)
    expect(lines[0]).toContain("--frobnicate")
    expect(lines[1]).toMatch(/^Usage: kern status/)
    expect(result.stderr).not.toMatch(/\bat .*\.js:\d+/)
  })

  it("an unknown command exits 2 with one message and the usage", async () => {
    const result = await runKern(["frobnicate"])
    expect(result.status).toBe(2)
    const lines = nonEmptyLines(result.stderr)
    expect(lines).toHaveLength(2)
    expect(lines[0]).toBe("kern: unknown command 'kern frobnicate'")
    expect(lines[1]).toMatch(/^Usage: kern <init \| status/)
  })

  it("init without a folder is a usage error, and writes nothing", async () => {
    const cwd = makeTempDir()
    const result = await runKern(["init"], { cwd })
    expect(result.status).toBe(2)
    expect(nonEmptyLines(result.stderr)[0]).toBe("kern: init needs a folder: kern init <dir> (use `kern init .` for this one)")
    expect(nonEmptyLines(result.stderr)[1]).toMatch(/^Usage: kern init /)
    expect(NodeFs.readdirSync(cwd)).toEqual([])
  })

  it("init creates an agent; a second init is refused with exit 2 and one line", async () => {
    const cwd = makeTempDir()
    const first = await runKern(["init", "./my-agent", "--model", "openai/gpt-4.1", "--no-git"], { cwd })
    expect(first.status).toBe(0)
    expect(first.stdout).toContain("Created agent \"my-agent\"")
    expect(first.stdout).toContain("Next: `kern status ")
    const viaNpx = await runKern(["init", "./other", "--no-git"], { cwd, env: { npm_command: "exec" } })
    expect(viaNpx.stdout).toContain("Next: `npx kern status ")
    expect(NodeFs.existsSync(NodePath.join(cwd, "my-agent/AGENTS.md"))).toBe(true)
    const second = await runKern(["init", "./my-agent"], { cwd })
    expect(second.status).toBe(2)
    expect(nonEmptyLines(second.stderr)).toHaveLength(1)
    expect(second.stderr).toContain("already an agent folder")
  })

  it("status --json decodes, and reports name, provider, model and problems", async () => {
    const cwd = makeTempDir()
    expect((await runKern(["init", "atlas", "--model", "openai/gpt-4.1", "--no-git"], { cwd })).status).toBe(0)
    const result = await runKern(["status", "--dir", "atlas", "--json"], { cwd, env: { OPENROUTER_API_KEY: "sk-x" } })
    expect(result.status).toBe(0)
    const status = Schema.decodeUnknownSync(StatusJson)(JSON.parse(result.stdout))
    expect(status).toMatchObject({ name: "atlas", provider: "openrouter", model: "openai/gpt-4.1", agentFolder: true, problems: [] })
    expect(JSON.parse(result.stdout).runtime).toBeNull()
    const noKey = Schema.decodeUnknownSync(StatusJson)(JSON.parse((await runKern(["status", "atlas", "--json"], { cwd })).stdout))
    expect(noKey.problems.some((problem) => problem.includes("OPENROUTER_API_KEY"))).toBe(true)
  })

  it("status reports the database size once kern.db exists", async () => {
    const cwd = makeTempDir()
    writeFiles(cwd, { "a/.kern/config.json": "{}", "a/.kern/kern.db": "x".repeat(4096) })
    const status = JSON.parse((await runKern(["status", "a", "--json"], { cwd })).stdout)
    expect(status.dbBytes).toBe(4096)
  })

  it("a config error exits 2 with exactly one line naming file, key, expected and found", async () => {
    const cwd = makeTempDir()
    writeFiles(cwd, { "a/.kern/config.json": JSON.stringify({ maxSteps: "thirty", colour: "blue" }) })
    const result = await runKern(["status", "a"], { cwd })
    expect(result.status).toBe(2)
    expect(nonEmptyLines(result.stderr)).toEqual([
      "kern: a/.kern/config.json: key \"maxSteps\": expected a positive integer, found the string \"thirty\""
    ])
  })

  it("unknown keys show up once each among the problems, and the command still works (exit 1: problems are listed)", async () => {
    const cwd = makeTempDir()
    writeFiles(cwd, { "a/.kern/config.json": JSON.stringify({ colour: "blue" }) })
    const result = await runKern(["status", "a", "--json"], { cwd })
    expect(result.status).toBe(1)
    expect(JSON.parse(result.stdout).problems).toEqual(expect.arrayContaining([expect.stringContaining("\"colour\"")]))
  })

  it("two different folders (positional and --dir) are a usage error", async () => {
    const result = await runKern(["status", "a", "--dir", "b"], { cwd: makeTempDir() })
    expect(result.status).toBe(2)
    expect(result.stderr).toContain("two folders given")
  })
})
