import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { runKern } from "../support/cli.js"
import { makeTempDir } from "../support/tempDir.js"

const kern = (cwd: string, ...args: Array<string>) => runKern(args, { cwd })

const writeNote = (dir: string, path: string) =>
  kern(dir, "kernel", "exec", "write", "--args", JSON.stringify({ path, content: "hello\n" }))

const setConfig = (dir: string, patch: Record<string, unknown>) => {
  const file = NodePath.join(dir, ".kern/config.json")
  NodeFs.writeFileSync(file, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(file, "utf8")), ...patch }))
}

describe("kern init under contractEnforcement enforce", () => {
  it("takes the first contract snapshot, so a fresh agent's write tool works", async () => {
    const cwd = makeTempDir()
    const init = await kern(cwd, "init", "agent", "--no-git", "--contract-enforcement", "enforce")
    expect(init.status, init.stderr).toBe(0)
    expect(init.stdout).toMatch(/contracts: approved \d+ tool contracts as the baseline/)
    const dir = NodePath.join(cwd, "agent")
    expect(JSON.parse(NodeFs.readFileSync(NodePath.join(dir, ".kern/config.json"), "utf8")).contractEnforcement).toBe("enforce")

    const write = await writeNote(dir, "notes/first.md")
    expect(write.status, write.stderr).toBe(0)
    expect(NodeFs.readFileSync(NodePath.join(dir, "notes/first.md"), "utf8")).toBe("hello\n")
    expect(JSON.parse((await kern(dir, "runtime-guard", "mismatches", "--json")).stdout).mismatches).toEqual([])
    const tools = JSON.parse((await kern(dir, "runtime-guard", "tools", "--json")).stdout).tools
    expect(tools.every((t: { status: string; approvedBy: string }) => t.status === "approved" && t.approvedBy === "kern init"))
      .toBe(true)
  })

  it("without a baseline enforce refuses the write and names the snapshot command; a re-init keeps a baseline", async () => {
    const cwd = makeTempDir()
    expect((await kern(cwd, "init", "agent", "--no-git")).status).toBe(0)
    const dir = NodePath.join(cwd, "agent")
    setConfig(dir, { contractEnforcement: "enforce" })
    const denied = await writeNote(dir, "notes/denied.md")
    expect(denied.status).toBe(1)
    expect(denied.stderr).toContain("PERMISSION_DENIED")
    expect(denied.stderr).toContain("kern runtime-guard snapshot")
    expect(NodeFs.existsSync(NodePath.join(dir, "notes/denied.md"))).toBe(false)

    // A forced re-init of a folder already under enforce takes the first baseline...
    const reinit = await kern(dir, "init", ".", "--force", "--no-git", "--json")
    expect(reinit.status, reinit.stderr).toBe(0)
    expect(JSON.parse(reinit.stdout).contracts).toMatchObject({ surface: "kernel", baseline: "approved" })
    expect((await writeNote(dir, "notes/ok.md")).status).toBe(0)

    // ...and never replaces one: drift stays for the operator to review.
    expect((await kern(dir, "runtime-guard", "approve-contract", "kernel", "write", "--approved-by", "alice")).status).toBe(0)
    const again = JSON.parse((await kern(dir, "init", ".", "--force", "--no-git", "--json")).stdout)
    expect(again.contracts).toMatchObject({ baseline: "kept" })
    const write = JSON.parse((await kern(dir, "runtime-guard", "tools", "--json")).stdout).tools.find((t: { toolId: string }) =>
      t.toolId === "write"
    )
    expect(write.approvedBy).toBe("alice")
  })

  it("observe (the default) takes no snapshot", async () => {
    const cwd = makeTempDir()
    const init = await kern(cwd, "init", "agent", "--no-git", "--json")
    expect(init.status, init.stderr).toBe(0)
    expect(JSON.parse(init.stdout).contracts).toBeUndefined()
    const tools = JSON.parse((await kern(NodePath.join(cwd, "agent"), "runtime-guard", "tools", "--json")).stdout).tools
    expect(tools.every((t: { status: string }) => t.status === "new")).toBe(true)
  })
})
