import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcess } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { startServer, token } from "../channels/web/harness.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { kernBin, runCollected, runKern, stdoutShows } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"

/** Resolves with the first match of `pattern` in what `child` writes to stderr from now on. */
const stderrMatch = (child: ChildProcess, pattern: RegExp) =>
  new Promise<RegExpExecArray>((resolve) => {
    let seen = ""
    child.stderr?.on("data", (chunk: Buffer) => {
      seen += chunk.toString("utf8")
      const found = pattern.exec(seen)
      if (found !== null) resolve(found)
    })
  })

describe("kern chat under approvalMode ask", () => {
  it.live("on a terminal: it asks y/n inline, and y runs the call", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL, { approvalMode: "ask", approvalTimeout: 120, recall: false })
      const marker = NodePath.join(dir, "made-on-yes")
      yield* server.reply(
        FakeReply.toolCalls([{ id: "c1", name: "bash", args: { command: `touch ${marker}` } }]),
        FakeReply.text("made it.")
      )
      let child: ChildProcess | undefined
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      // `script` gives kern a terminal (a pty) for stdin, stdout and stderr.
      const done = runCollected("script", ["-qfec", `${process.execPath} ${kernBin} chat -m "make it"`, "/dev/null"], {
        cwd: dir,
        env: { OPENROUTER_API_KEY: "sk-test", TERM: "xterm" },
        stdin: true,
        onSpawn: (spawned) => (child = spawned)
      })
      yield* Effect.promise(() => stdoutShows(child!, "(y/n)"))
      child!.stdin!.write("y\r")
      const result = yield* Effect.promise(() => done)
      expect(result.stdout).toMatch(/approve apr_[0-9a-f]{8}\? \(y\/n\)/)
      expect(result.stdout).toContain("made it.")
      expect(NodeFs.existsSync(marker)).toBe(true)
    })))


  it.live("in this process, piped: what waits, its id and arguments, that nobody can answer here, and the timeout", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL, { approvalMode: "ask", approvalTimeout: 2, recall: false })
      const marker = NodePath.join(dir, "never-made")
      yield* server.reply(
        FakeReply.toolCalls([{ id: "c1", name: "bash", args: { command: `touch ${marker}` } }]),
        FakeReply.text("could not.")
      )
      const result = yield* Effect.promise(() =>
        runKern(["chat", "-m", "make it"], { cwd: dir, env: { OPENROUTER_API_KEY: "sk-test" } })
      )
      expect(result.status, result.stderr).toBe(0)
      expect(result.stderr).toMatch(/approval apr_[0-9a-f]{8}: bash waits for your yes/)
      expect(result.stderr).toContain(`"command": "touch ${marker}"`)
      expect(result.stderr).toContain("nobody can answer it here (no terminal)")
      expect(result.stderr).toMatch(/approval apr_[0-9a-f]{8}: nobody answered in time; denied/)
      expect(NodeFs.existsSync(marker)).toBe(false)
    })))

  it.live("through the running agent, piped: the id and the kern approve / kern deny commands; kern approve runs the call", () =>
    Effect.scoped(Effect.gen(function*() {
      const { model, dir, port } = yield* startServer({ config: { approvalMode: "ask", recall: false } })
      const configFile = NodePath.join(dir, ".kern", "config.json")
      NodeFs.writeFileSync(configFile, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(configFile, "utf8")), port }))
      NodeFs.writeFileSync(NodePath.join(dir, ".kern", ".env"), `KERN_AUTH_TOKEN=${token}\n`, { mode: 0o600 })
      const marker = NodePath.join(dir, "chat-marker")
      yield* model.reply(FakeReply.toolCalls([{ id: "c1", name: "bash", args: { command: `touch ${marker}` } }]), FakeReply.text("made."))
      let child: ChildProcess | undefined
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      let asked: Promise<RegExpExecArray> | undefined
      const done = runKern(["chat", "-m", "make it", dir], {
        env: { OPENROUTER_API_KEY: "sk-test" },
        onSpawn: (spawned) => {
          child = spawned
          asked = stderrMatch(spawned, /answer with: kern approve (apr_[0-9a-f]{8})\s+or: kern deny (apr_[0-9a-f]{8})/)
        }
      })
      const [, id, denyId] = yield* Effect.promise(() => asked!)
      expect(denyId).toBe(id)
      const listed = yield* Effect.promise(() => runKern(["approvals", dir], { env: { OPENROUTER_API_KEY: "sk-test" } }))
      expect(listed.status, listed.stderr).toBe(0)
      expect(listed.stdout).toContain(`${id}  bash (`)
      expect(listed.stdout).toContain(`arguments: {"command":"touch ${marker}"}`)
      expect(listed.stdout).toMatch(/asked by cli terminal user operator at \d{4}-/)
      expect(listed.stdout).toContain(`kern approve ${id} / kern deny ${id}`)
      const status = yield* Effect.promise(() => runKern(["status", dir], { env: { OPENROUTER_API_KEY: "sk-test" } }))
      expect(status.stdout).toContain("approvals: 1 waiting")
      expect(status.stdout).toContain(`  ${id} bash, asked by operator, denied at `)
      const json = yield* Effect.promise(() => runKern(["approvals", dir, "--json"], { env: { OPENROUTER_API_KEY: "sk-test" } }))
      expect(JSON.parse(json.stdout)).toMatchObject({ running: true, approvals: [{ id, toolId: "bash", userId: "operator" }] })
      const approved = yield* Effect.promise(() => runKern(["approve", id!, dir], { env: { OPENROUTER_API_KEY: "sk-test" } }))
      expect(approved.status, approved.stderr).toBe(0)
      const result = yield* Effect.promise(() => done)
      expect(result.status, result.stderr).toBe(0)
      expect(result.stderr).toContain(`approval ${id}: bash waits for your yes`)
      expect(result.stderr).toContain(`approval ${id}: approved by operator`)
      expect(result.stdout).toContain("made.")
      expect(NodeFs.existsSync(marker)).toBe(true)
    })))

  it.live("kern approvals without a running agent says nothing waits", () =>
    Effect.gen(function*() {
      const dir = initAgentWithModel("http://127.0.0.1:9/v1")
      const listed = yield* Effect.promise(() => runKern(["approvals", dir]))
      expect(listed.status, listed.stderr).toBe(0)
      expect(listed.stdout).toContain("is not running: nothing waits for approval")
    }))
})
