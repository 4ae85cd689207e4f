import { describe, expect, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { type ChildProcess } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { bearer, request, startServer, token } from "../channels/web/harness.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { runKern, stdoutShows } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"

const env = { OPENROUTER_API_KEY: "sk-test" }

describe("approvals on the terminal and the command line", () => {
  it.live("the TUI shows a waiting call's full arguments; y runs it, n refuses the next", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL, { approvalMode: "ask", recall: false })
      const marker = NodePath.join(dir, "tui-marker")
      const refused = NodePath.join(dir, "tui-refused")
      yield* server.reply(
        FakeReply.toolCalls([{ id: "c1", name: "bash", args: { command: `touch ${marker}` } }]),
        FakeReply.text("made it."),
        FakeReply.toolCalls([{ id: "c2", name: "bash", args: { command: `touch ${refused}` } }]),
        FakeReply.text("not made.")
      )
      let child: ChildProcess | undefined
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      const done = runKern(["tui"], { cwd: dir, env, stdin: true, onSpawn: (spawned) => (child = spawned) })
      const input = child!.stdin!
      const asked = stdoutShows(child!, "y / n answers it")
      input.write("make the marker\n")
      yield* Effect.promise(() => asked)
      expect(NodeFs.existsSync(marker)).toBe(false)
      const made = stdoutShows(child!, "made it.")
      input.write("y\n")
      yield* Effect.promise(() => made)
      expect(NodeFs.existsSync(marker)).toBe(true)
      const askedAgain = stdoutShows(child!, `"command": "touch ${refused}"`)
      input.write("and the other one\n")
      yield* Effect.promise(() => askedAgain)
      input.end("n\n")
      const result = yield* Effect.promise(() => done)
      expect(result.status).toBe(0)
      expect(result.stdout).toMatch(/approval apr_[0-9a-f]{8}: bash needs your yes/)
      expect(result.stdout).toMatch(/approval apr_[0-9a-f]{8}: approved by operator/)
      expect(result.stdout).toMatch(/approval apr_[0-9a-f]{8}: denied by operator/)
      expect(result.stdout).toContain("not made.")
      expect(NodeFs.existsSync(refused)).toBe(false)
      // y and n were answers, never messages to the model.
      expect(JSON.stringify((yield* server.modelRequests).map((r) => r.body))).not.toMatch(/"content":"[yn]"/)
    })))

  it.live("kern approve / deny answer the running agent; without one they say so", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, model, dir, port } = yield* startServer({ config: { approvalMode: "ask", recall: false } })
      // The CLI finds the running agent from the folder's config and token, as it does a `kern start`ed one.
      const configFile = NodePath.join(dir, ".kern", "config.json")
      NodeFs.writeFileSync(configFile, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(configFile, "utf8")), port }))
      NodeFs.writeFileSync(NodePath.join(dir, ".kern", ".env"), `KERN_AUTH_TOKEN=${token}\n`, { mode: 0o600 })
      const marker = NodePath.join(dir, "cli-marker")
      yield* model.reply(FakeReply.toolCalls([{ id: "c1", name: "bash", args: { command: `touch ${marker}` } }]), FakeReply.text("ok"))
      yield* request(`${base}/message`, {
        method: "POST",
        headers: { ...bearer, "content-type": "application/json" },
        body: JSON.stringify({ text: "make it" })
      })
      const id = yield* request(`${base}/approvals`, { headers: bearer }).pipe(
        Effect.map((answer) => (answer.json as { approvals: ReadonlyArray<{ id: string }> }).approvals[0]?.id),
        Effect.filterOrFail((found): found is string => found !== undefined),
        Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("20 seconds")))
      )
      const unknown = yield* Effect.promise(() => runKern(["deny", "apr_00000000", dir], { env }))
      expect(unknown.status).toBe(1)
      // The agent's own sentence, never an HTTP status.
      expect(unknown.stderr.trim()).toBe("kern: no approval apr_00000000 is waiting (answered, timed out, or never asked)")
      const unknownApprove = yield* Effect.promise(() => runKern(["approve", "apr_x", dir], { env }))
      expect(unknownApprove.status).toBe(1)
      expect(unknownApprove.stderr.trim()).toBe("kern: no approval apr_x is waiting (answered, timed out, or never asked)")
      const approved = yield* Effect.promise(() => runKern(["approve", id, dir, "--json"], { env }))
      expect(approved.stderr).toBe("")
      expect(JSON.parse(approved.stdout)).toMatchObject({ id, approved: true, outcome: "approved", by: "operator" })
      yield* model.awaitRequests(2)
      expect(NodeFs.existsSync(marker)).toBe(true)
    })))

  it.live("kern tui attached to the running agent shows the approvals waiting and answers them over HTTP", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, model, dir, port } = yield* startServer({ config: { approvalMode: "ask", recall: false } })
      const configFile = NodePath.join(dir, ".kern", "config.json")
      NodeFs.writeFileSync(configFile, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(configFile, "utf8")), port }))
      NodeFs.writeFileSync(NodePath.join(dir, ".kern", ".env"), `KERN_AUTH_TOKEN=${token}\n`, { mode: 0o600 })
      const marker = NodePath.join(dir, "attached-marker")
      yield* model.reply(FakeReply.toolCalls([{ id: "c1", name: "bash", args: { command: `touch ${marker}` } }]), FakeReply.text("ok"))
      // Asked before the terminal attaches: it lists what waits when it connects.
      yield* request(`${base}/message`, {
        method: "POST",
        headers: { ...bearer, "content-type": "application/json" },
        body: JSON.stringify({ text: "make it" })
      })
      yield* request(`${base}/approvals`, { headers: bearer }).pipe(
        Effect.filterOrFail((answer) => (answer.json as { approvals: ReadonlyArray<unknown> }).approvals.length === 1),
        Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("20 seconds")))
      )
      let child: ChildProcess | undefined
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      const done = runKern(["tui", dir], { env, stdin: true, onSpawn: (spawned) => (child = spawned) })
      const asked = stdoutShows(child!, "y / n answers it")
      yield* Effect.promise(() => asked)
      const answered = stdoutShows(child!, "approved by operator")
      child!.stdin!.write("y\n")
      yield* Effect.promise(() => answered)
      yield* model.awaitRequests(2)
      expect(NodeFs.existsSync(marker)).toBe(true)
      child!.stdin!.end("/quit\n")
      expect((yield* Effect.promise(() => done)).status).toBe(0)
    })))

  it("kern approve with no agent running fails with a clear line", async () => {
    const dir = initAgentWithModel("http://127.0.0.1:9/v1")
    const result = await runKern(["approve", "apr_12345678", dir], { env })
    expect(result.status).toBe(1)
    expect(result.stderr).toContain("is not running, so nothing waits for approval")
    expect(result.stderr).not.toMatch(/\n\s+at /)
  })
})
