import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { initAgentFolder } from "../support/agentFolder.js"
import { runKern } from "../support/cli.js"
import { runKernIn } from "../support/inProcessCli.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const lines = (text: string) => text.split("\n").filter((line) => line.trim() !== "")
const withKey = { OPENROUTER_API_KEY: "sk-test" }

describe("usage mistakes: exit 2, one message, the command's usage", () => {
  it("kern pair hello is a usage mistake (exit 2 from the process), as is a user id that is not <channel>:<id>", async () => {
    const dir = initAgentFolder(["--model", "m"])
    const pair = await runKern(["pair", "hello", dir], { env: withKey })
    expect(pair.status).toBe(2)
    expect(pair.stderr).toContain(`"hello" is not a pairing code (they look like KERN-7QX4)`)
    expect(pair.stderr).toMatch(/^Usage: kern pair .*<code>/m)
    for (const command of [["users", "promote"], ["users", "revoke"], ["users", "scope"]]) {
      const result = await runKernIn([...command, "hello", ...(command[1] === "scope" ? ["read"] : []), dir], { env: withKey })
      expect(result.status, `${command.join(" ")}: ${result.stderr}`).toBe(2)
      expect(result.stderr).toContain(`"hello" is not a user id`)
      expect(result.stderr).toMatch(new RegExp(`^Usage: kern ${command.join(" ")} `, "m"))
    }
    // Well formed but unknown is a failure, not a usage mistake.
    const unknown = await runKernIn(["pair", "KERN-ABCD", dir], { env: withKey })
    expect(unknown.status).toBe(1)
    expect(lines(unknown.stderr)).toEqual(["kern: no pairing is waiting for code KERN-ABCD"])
  })

  it("a usage mistake a command finds itself prints its usage too", async () => {
    const result = await runKernIn(["status", "a", "--dir", "b"])
    expect(result.status).toBe(2)
    expect(lines(result.stderr)).toEqual([
      `kern: two folders given: "a" and --dir "b"`,
      "Usage: kern status [--dir text] [--json] [--host] [<dir>]  (kern status --help for more)"
    ])
  })

  it("a mistyped command, subcommand, flag or flag value gets 'did you mean'", async () => {
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["stauts"], "kern: unknown command 'kern stauts': did you mean 'kern status'?"],
      [["sessions", "lst"], "kern: unknown command 'kern sessions lst': did you mean 'kern sessions list'?"],
      [["recall", "serch", "heron"], "kern: unknown command 'kern recall serch': did you mean 'kern recall search'?"],
      [["users", "promot", "telegram:1"], "kern: unknown command 'kern users promot': did you mean 'kern users promote'?"],
      [["kernel", "tols"], "kern: unknown command 'kern kernel tols': did you mean 'kern kernel tools'?"],
      [["frobnicate"], "kern: unknown command 'kern frobnicate'"],
      [["--verison"], "kern: unknown option '--verison' for kern: did you mean --version?"],
      [["status", "--jsn"], "kern: unknown option '--jsn' for kern status: did you mean --json?"],
      [["chat", "--mesage", "hi"], "kern: unknown option '--mesage' for kern chat: did you mean --message?"],
      [["logs", "--level", "bogus"], `kern: --level must be one of debug, info, warn, error, not "bogus"`],
      [["logs", "--level=wran"], `kern: --level must be one of debug, info, warn, error, not "wran": did you mean warn?`],
      [["init", "x", "--provider", "openruoter"], `kern: --provider must be one of openrouter, openai, ollama, openai-compatible, anthropic, not "openruoter": did you mean openrouter?`]
    ]
    for (const [argv, line] of cases) {
      const result = await runKernIn(argv)
      expect(result.status, argv.join(" ")).toBe(2)
      expect(result.stdout, argv.join(" ")).toBe("")
      const [first, usage, ...rest] = lines(result.stderr)
      expect(first, argv.join(" ")).toBe(line)
      expect(usage, argv.join(" ")).toMatch(/^Usage: kern/)
      expect(rest).toEqual([])
    }
    // A folder after `kern users` is still a folder; only a near miss of a subcommand is taken for one.
    const cwd = makeTempDir()
    const listed = await runKernIn(["users", NodePath.join(cwd, "prom")])
    expect(listed.stderr).not.toContain("did you mean")
  })
})

describe("kern status and its exit code", () => {
  it("exits 1 when it lists problems, 0 when there are none, with the same output", async () => {
    const dir = initAgentFolder(["--model", "openai/gpt-4.1"])
    const clean = await runKernIn(["status", dir], { env: withKey })
    expect(clean.status, clean.stderr).toBe(0)
    expect(clean.stdout).toContain("problems:  none")
    const noKey = await runKernIn(["status", dir])
    expect(noKey.status).toBe(1)
    expect(noKey.stdout).toMatch(/problems:\n {2}- .*OPENROUTER_API_KEY/)
    expect(lines(noKey.stderr)).toEqual(["kern: 1 problem listed above"])
    const json = await runKernIn(["status", dir, "--json"])
    expect(json.status).toBe(1)
    expect(JSON.parse(json.stdout).problems).toHaveLength(1)
    expect(lines(json.stderr)).toEqual([`kern: 1 problem listed in "problems"`])
  })
})

describe("config keys: did you mean", () => {
  const withConfig = (config: Record<string, unknown>) => {
    const dir = initAgentFolder(["--model", "m"])
    const file = NodePath.join(dir, ".kern/config.json")
    NodeFs.writeFileSync(file, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(file, "utf8")), ...config }))
    return dir
  }

  it("a misspelt safety setting stops kern (exit 2) naming the key it means; the agent is not run with its default", async () => {
    for (const [key, meant] of [["aprovalMode", "approvalMode"], ["approvalmode", "approvalMode"], ["safteyMode", "safetyMode"], ["toolscope", "toolScope"], ["workspaceGaurd", "workspaceGuard"]]) {
      const dir = withConfig({ [key!]: "ask" })
      for (const argv of [["status", dir], ["chat", dir, "-m", "hi", "--wait", "0"], ["kernel", "info", dir]]) {
        const result = await runKernIn(argv, { env: withKey })
        expect(result.status, `${key} ${argv[0]}: ${result.stderr}`).toBe(2)
        expect(result.stderr).toContain(`unknown key "${key}": did you mean "${meant}"? A misspelt safety setting is not ignored`)
      }
    }
    const budget = withConfig({ budget: { maxCostUsdCent: 50 } })
    const result = await runKernIn(["status", budget], { env: withKey })
    expect(result.status).toBe(2)
    expect(result.stderr).toContain(`unknown key "budget.maxCostUsdCent": did you mean "budget.maxCostUsdCents"?`)
  })

  it("a near miss of another key is a listed problem with the key it means; a key like none is listed as before", async () => {
    const dir = withConfig({ recal: false, colour: "blue" })
    const result = await runKernIn(["status", dir, "--json"], { env: withKey })
    expect(result.status).toBe(1)
    const problems: ReadonlyArray<string> = JSON.parse(result.stdout).problems
    expect(problems).toContainEqual(expect.stringMatching(/unknown key "recal" ignored \(did you mean "recall"\?\)$/))
    expect(problems).toContainEqual(expect.stringMatching(/unknown key "colour" ignored$/))
  })
})

describe("small wording", () => {
  it("--version prints the version and nothing else", async () => {
    const pkg = JSON.parse(NodeFs.readFileSync("package.json", "utf8"))
    const result = await runKernIn(["--version"])
    expect(result.status).toBe(0)
    expect(result.stdout).toBe(`v${pkg.version}\n`)
  })

  it("kern users scope's usage names the scopes, not <scope> followed by them", async () => {
    const result = await runKernIn(["users", "scope", "telegram:1"])
    expect(result.status).toBe(2)
    expect(result.stderr).toContain("give a tool scope (read, write or full), --memory shared|all, or both")
    const usage = "kern users scope [--memory shared | all] [--dir text] <id> [<read|write|full>] [<dir>]"
    expect(result.stderr).toContain(`Usage: ${usage}`)
    expect((await runKernIn(["users", "scope", "--help"])).stdout).toContain(usage)
  })

  it("a count of one reads in the singular (one helper, config/counted.ts): tools, like the recall index line", async () => {
    const dir = initAgentFolder(["--model", "m"])
    writeFiles(dir, { "one.txt": "hello\n" })
    const outline = await runKernIn(["kernel", "exec", "read", dir, "--args", JSON.stringify({ path: "one.txt", mode: "outline" })])
    expect(outline.stdout).toContain("one.txt: no outline for this file type (1 line)")
    const structure = await runKernIn(["kernel", "exec", "summarize_file_structure", dir, "--args", JSON.stringify({ path: "one.txt" })])
    expect(structure.stdout).toContain("one.txt: 1 line, 6 B")
  })

  it("every column of kern sessions list has a heading", async () => {
    const dir = initAgentFolder(["--model", "m"])
    writeFiles(dir, {
      ".kern/sessions/20260101-100000-000-aaaa.jsonl":
        `${JSON.stringify({ type: "session", version: 1, id: "20260101-100000-000-aaaa", createdAt: "2026-01-01T00:00:00.000Z", agent: "t" })}\n`
    })
    const result = await runKernIn(["sessions", "list", dir])
    expect(result.status, result.stderr).toBe(0)
    const [heading, rule, row] = result.stdout.split("\n")
    expect(row).toContain("active")
    // Each column under a rule of dashes has a name above it.
    const columns = [...rule!.matchAll(/-+/g)].map((dash) => heading!.slice(dash.index, dash.index + dash[0].length).trim())
    expect(columns).not.toContain("")
    expect(columns.at(-1)).toBe("state")
  })
})
