import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as Database from "../../src/storage/Database.js"
import * as NodePath from "node:path"
import { bashDefaultTimeoutMs } from "../../src/tools/bash.js"
import { runKern } from "../support/cli.js"
import { runKernIn } from "../support/inProcessCli.js"
import { initAgentFolder } from "../support/agentFolder.js"
import { makeTempDir } from "../support/tempDir.js"

const newAgent = (config: Record<string, unknown> = {}) => initAgentFolder([], config)

// In-process: these test what the commands do; the process itself is the subject only where a test says so.
const kern = (dir: string, ...args: Array<string>) => runKernIn([...args, "--dir", dir])

describe("kern kernel", () => {
  it("info and tools describe the registry; tools filters by safety class and --json decodes", async () => {
    const dir = newAgent()
    const info = JSON.parse((await kern(dir, "kernel", "info", "--json")).stdout)
    expect(info).toMatchObject({ tools: 21, policy: "normal", contractEnforcement: "observe", namespaces: 8 })
    expect(info.toolsBySafety).toEqual({ READ_ONLY: 11, LOCAL_WRITE: 6, NETWORK: 3, DESTRUCTIVE: 1 })
    const readOnly = JSON.parse((await kern(dir, "kernel", "tools", "--safety", "read_only", "--json")).stdout)
    expect(readOnly.map((tool: { toolId: string }) => tool.toolId)).toEqual([
      "ask_user_question",
      "context_budget_stats",
      "context_for_task",
      "glob",
      "grep",
      "kern",
      "read",
      "read_skill",
      "recall",
      "retrieve_tool_output",
      "summarize_file_structure"
    ])
    expect(readOnly[0].fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/)
  })

  it("tools shows the timeout a call really gets by default: bash's 120000 ms, the figure bash.ts runs it with", async () => {
    const dir = newAgent()
    const tools = JSON.parse((await kern(dir, "kernel", "tools", "--json")).stdout) as Array<{ toolId: string; timeoutMs: number }>
    expect(tools.find((tool) => tool.toolId === "bash")?.timeoutMs).toBe(bashDefaultTimeoutMs)
    expect(bashDefaultTimeoutMs).toBe(120_000)
    expect(tools.find((tool) => tool.toolId === "read")?.timeoutMs).toBe(30_000)
    const table = (await kern(dir, "kernel", "tools")).stdout
    expect(table.split("\n").find((line) => line.startsWith("bash"))).toContain("120000 ms")
  })

  it("exec web_search without a search provider says so (exit 1)", async () => {
    const dir = newAgent()
    const result = await kern(dir, "kernel", "exec", "web_search", "--args", JSON.stringify({ query: "effect layers" }))
    expect(result.status).toBe(1)
    expect(result.stderr).toContain("no search provider configured")
    expect(result.stderr.trim().split("\n")).toHaveLength(1)
  })

  it("namespaces lists the eight decision keys", async () => {
    const result = await runKernIn(["kernel", "namespaces", "--json"])
    expect(JSON.parse(result.stdout).map((n: { key: string }) => n.key)).toEqual([
      "kernel.tool.dispatch",
      "kernel.tool.policy.blocked",
      "kernel.tool.approval",
      "kernel.budget.exceeded",
      "kernel.memory.put",
      "kernel.memory.get",
      "kernel.run.started",
      "kernel.run.finished"
    ])
  })

  it("exec runs tools through the executor; each call is recorded", async () => {
    const dir = newAgent()
    const write = await kern(dir, "kernel", "exec", "write", "--args", JSON.stringify({ path: "notes/today.md", content: "hello\n" }))
    expect(write.status).toBe(0)
    expect(NodeFs.readFileSync(NodePath.join(dir, "notes/today.md"), "utf8")).toBe("hello\n")
    const read = await kern(dir, "kernel", "exec", "read", "--args", JSON.stringify({ path: "notes/today.md" }), "--json")
    const result = JSON.parse(read.stdout)
    expect(result).toMatchObject({ toolId: "read", success: true, retries: 0 })
    expect(result.data.text).toContain("1\thello")
    const bash = JSON.parse((await kern(dir, "kernel", "exec", "bash", "--args", JSON.stringify({ command: "pwd; exit 3" }), "--json")).stdout)
    expect(bash.data.exitCode).toBe(3)
    expect(bash.data.stdout.trim()).toBe(NodeFs.realpathSync(dir))
    expect(JSON.parse((await kern(dir, "kernel", "info", "--json")).stdout).events).toBe(3)
  })

  it("exec failures exit 1 with one line naming the code; bad --args exits 2", async () => {
    const dir = newAgent()
    const outside = await kern(dir, "kernel", "exec", "read", "--args", JSON.stringify({ path: "../../../etc/passwd" }))
    expect(outside.status).toBe(1)
    expect(outside.stderr.trim().split("\n")).toHaveLength(1)
    expect(outside.stderr).toContain("PERMISSION_DENIED")
    const invalid = await kern(dir, "kernel", "exec", "read", "--args", JSON.stringify({ path: 42 }))
    expect(invalid.status).toBe(1)
    expect(invalid.stderr).toContain("VALIDATION_ERROR")
    const unknown = await kern(dir, "kernel", "exec", "rm_rf")
    expect(unknown.stderr).toContain("NOT_FOUND")
    expect(unknown.stderr).toContain("read")
    const badJson = await kern(dir, "kernel", "exec", "read", "--args", "{oops")
    expect(badJson.status).toBe(2)
    expect(badJson.stderr).toContain("--args is not valid JSON")
  })

  it("a catastrophically backtracking grep pattern finishes instead of freezing the process", async () => {
    const dir = newAgent()
    // Without the backtracking guard, `(a+)+$` on the long line takes longer than the age of the universe.
    NodeFs.writeFileSync(NodePath.join(dir, "notes", "redos.txt"), `aaaa\n${"a".repeat(40)}b\n`)
    const result = await kern(dir, "kernel", "exec", "grep", "--args", JSON.stringify({ pattern: "(a+)+$", path: "notes" }), "--json")
    expect(result.status).toBe(0)
    const out = JSON.parse(result.stdout)
    expect(out.success).toBe(true)
    expect(out.data.matches).toBe(1)
    expect(out.data.text).toContain("redos.txt:1:aaaa")
  })

  it("a backreference pattern runs in the bundle's regex worker and finds its matches", async () => {
    const dir = newAgent()
    NodeFs.writeFileSync(NodePath.join(dir, "notes", "pairs.txt"), "hello\nworld\nbook\n")
    const args = JSON.stringify({ pattern: "(\\w)\\1", path: "notes/pairs.txt" })
    // The subject is the bundle (its worker file ships beside it): a real process.
    const result = await runKern(["kernel", "exec", "grep", "--args", args, "--json"], { cwd: dir })
    expect(result.status).toBe(0)
    expect(JSON.parse(result.stdout).data.text).toBe("notes/pairs.txt:1:hello\nnotes/pairs.txt:3:book")
  })

  it("--safety-mode SAFE refuses writes; approvalMode deny refuses bash; toolScope read hides write tools", async () => {
    const dir = newAgent()
    const safe = await kern(dir, "kernel", "exec", "write", "--args", JSON.stringify({ path: "x", content: "y" }), "--safety-mode", "SAFE")
    expect(safe.stderr).toContain("read-only tools only")
    expect(NodeFs.existsSync(NodePath.join(dir, "x"))).toBe(false)
    const denying = newAgent({ approvalMode: "deny" })
    const bash = await kern(denying, "kernel", "exec", "bash", "--args", JSON.stringify({ command: "touch made" }))
    expect(bash.status).toBe(1)
    expect(bash.stderr).toContain("approvalMode is deny")
    expect(NodeFs.existsSync(NodePath.join(denying, "made"))).toBe(false)
    const readScope = newAgent({ toolScope: "read" })
    const tools = JSON.parse((await kern(readScope, "kernel", "tools", "--json")).stdout).map((t: { toolId: string }) => t.toolId)
    expect(tools).not.toContain("write")
    expect(tools).not.toContain("bash")
    expect(tools).toContain("webfetch")
  })

  it("a folder that is not an agent is refused with exit 2 before anything is created", async () => {
    const cwd = makeTempDir()
    const result = await runKernIn(["kernel", "info", "--dir", cwd])
    expect(result.status).toBe(2)
    expect(result.stderr).toContain("not an agent folder")
    expect(NodeFs.readdirSync(cwd)).toEqual([])
  })
})

describe("kern runtime-guard", () => {
  it("snapshot approves, mismatches reports changes, approve-contract re-approves, enforce denies in between", async () => {
    const dir = newAgent({ contractEnforcement: "enforce" })
    const before = JSON.parse((await kern(dir, "runtime-guard", "mismatches", "--json")).stdout)
    expect(before.mismatches).toHaveLength(21)
    expect(before.mismatches.every((m: { kind: string }) => m.kind === "new")).toBe(true)

    const snapshot = await kern(dir, "runtime-guard", "snapshot", "--approved-by", "alice")
    expect(snapshot.stdout).toContain("approved 21 contracts")
    expect(JSON.parse((await kern(dir, "runtime-guard", "mismatches", "--json")).stdout).mismatches).toEqual([])

    // As if `write` had changed since it was approved (an upgrade rewrote its contract).
    Effect.runSync(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE contract_baselines SET fingerprint = 'sha256:old' WHERE tool_id = 'write'`)
        .pipe(Effect.provide(Database.layer({ filename: NodePath.join(dir, ".kern/kern.db") })))
    )
    const denied = await kern(dir, "kernel", "exec", "write", "--args", JSON.stringify({ path: "n.md", content: "x" }))
    expect(denied.status).toBe(1)
    expect(denied.stderr).toContain("changed from the approved baseline")
    expect(NodeFs.existsSync(NodePath.join(dir, "n.md"))).toBe(false)
    expect(JSON.parse((await kern(dir, "runtime-guard", "mismatches", "--json")).stdout).mismatches).toMatchObject([
      { toolId: "write", kind: "changed", approvedFingerprint: "sha256:old" }
    ])
    expect((await kern(dir, "runtime-guard", "approve-contract", "kernel", "write")).status).toBe(0)
    expect((await kern(dir, "kernel", "exec", "write", "--args", JSON.stringify({ path: "n.md", content: "x" }))).status).toBe(0)

    // Narrowing the scope makes the write tools "missing" from the live registry.
    const file = NodePath.join(dir, ".kern/config.json")
    NodeFs.writeFileSync(file, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(file, "utf8")), toolScope: "read" }))
    const missing = JSON.parse((await kern(dir, "runtime-guard", "mismatches", "--json")).stdout).mismatches
    expect(missing.map((m: { toolId: string; kind: string }) => `${m.toolId}:${m.kind}`)).toEqual(["bash:missing", "edit:missing", "jobs:missing", "kern_pair:missing", "message:missing", "schedule:missing", "write:missing"])

    const tools = JSON.parse((await kern(dir, "runtime-guard", "tools", "--json")).stdout)
    expect(tools.tools.find((t: { toolId: string }) => t.toolId === "read")).toMatchObject({ status: "approved", approvedBy: "alice" })

    const approve = await kern(dir, "runtime-guard", "approve-contract", "kernel", "read", "--approved-by", "bob", "--json")
    expect(JSON.parse(approve.stdout)).toMatchObject({ toolId: "read", approvedBy: "bob", surface: "kernel" })
    const unknown = await kern(dir, "runtime-guard", "approve-contract", "kernel", "nope")
    expect(unknown.status).toBe(1)
    expect(unknown.stderr).toContain("no tool \"nope\"")
  })
})
