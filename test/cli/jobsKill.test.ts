import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { initAgentWithModel } from "../support/agentFolder.js"
import { recordedPid } from "../support/backgroundAgent.js"
import { runKern } from "../support/cli.js"
import { FakeReply, make as makeFakeServer, type RecordedRequest } from "../support/fakeModelServer.js"
import { taggedProcesses } from "../support/mcpServers.js"
import { eventually, eventuallyEffect } from "../support/waitFor.js"
import { processRunning } from "../../src/storage/processState.js"

// A background job running when its agent is killed with SIGKILL: the next start reaps its processes and reports it,
// once, as interrupted with its output so far, in the conversation that started it; it is never run again by itself.

const env = { OPENROUTER_API_KEY: "sk-test" }

const kern = (args: ReadonlyArray<string>, cwd: string) => Effect.promise(() => runKern(args, { cwd, env }))


/** The text of a request's last user message: what started its turn. */
const lastUser = (request: RecordedRequest): string => {
  const messages = (request.body as { messages?: ReadonlyArray<{ role: string; content: unknown }> }).messages ?? []
  const last = messages.filter((m) => m.role === "user").at(-1)
  return last === undefined ? "" : typeof last.content === "string" ? last.content : JSON.stringify(last.content)
}

const outputSoFar = (dir: string) => {
  const jobsDir = NodePath.join(dir, ".kern/jobs")
  if (!NodeFs.existsSync(jobsDir)) return ""
  return NodeFs.readdirSync(jobsDir).map((file) => NodeFs.readFileSync(NodePath.join(jobsDir, file), "utf8")).join("")
}

describe("background jobs across kill -9", () => {
  it.live("a job mid-run when the agent is killed: reaped at the next start, reported once as interrupted, not rerun", () =>
    Effect.scoped(Effect.gen(function*() {
      const model = yield* makeFakeServer
      const dir = initAgentWithModel(model.baseURL, { heartbeatInterval: 0, autoCommit: false })
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const pid of taggedProcesses(dir)) process.kill(pid, "SIGKILL")
          const agent = NodeFs.existsSync(NodePath.join(dir, ".kern/agent.pid")) ? recordedPid(dir) : undefined
          if (agent !== undefined && processRunning(agent)) process.kill(agent, "SIGKILL")
        })
      )
      const command = "echo run >> runs.txt; echo $$ > job.pid; echo before-kill; exec sleep 600"
      yield* model.reply(
        FakeReply.toolCalls([{ id: "c1", name: "bash", args: { command, background: true } }]),
        FakeReply.text("started it")
      )
      expect((yield* kern(["start"], dir)).status).toBe(0)
      const chat = yield* kern(["chat", "-m", "run the long thing in the background"], dir)
      expect(chat.status, chat.stderr).toBe(0)
      expect(yield* eventually(() => NodeFs.existsSync(NodePath.join(dir, "job.pid")) && outputSoFar(dir).includes("before-kill"))).toBe(true)
      const job = Number(NodeFs.readFileSync(NodePath.join(dir, "job.pid"), "utf8").trim())
      expect(processRunning(job)).toBe(true)
      const listed = yield* kern(["jobs", "--json"], dir)
      expect(JSON.parse(listed.stdout)).toMatchObject([{ id: 1, state: "running", command }])

      const agent = recordedPid(dir)
      process.kill(agent, "SIGKILL")
      expect(yield* eventually(() => !processRunning(agent))).toBe(true)
      // Nothing stops a job when its agent dies by SIGKILL: the next start's work. `kern jobs` reads kern.db alone.
      expect(processRunning(job)).toBe(true)
      const meanwhile = yield* kern(["jobs"], dir)
      expect(meanwhile.status, meanwhile.stderr).toBe(0)
      expect(meanwhile.stdout).toContain("running")

      yield* model.reply(FakeReply.text("noted: it was interrupted"))
      expect((yield* kern(["start"], dir)).status).toBe(0)
      const reported = Effect.map(model.modelRequests, (all) => all.filter((request) => lastUser(request).includes("[job 1 interrupted")))
      expect(yield* eventuallyEffect(Effect.map(reported, (found) => found.length > 0))).toBe(true)
      const report = lastUser((yield* reported)[0]!)
      expect(report).toContain("[job 1 interrupted")
      expect(report).toContain("it was not run again")
      expect(report).toContain("before-kill")
      // The old process group is gone, and the command ran once.
      expect(yield* eventually(() => !processRunning(job))).toBe(true)
      expect(NodeFs.readFileSync(NodePath.join(dir, "runs.txt"), "utf8")).toBe("run\n")
      const after = yield* kern(["jobs", "--json"], dir)
      const [row] = JSON.parse(after.stdout) as ReadonlyArray<{ state: string; artifactId: string | null }>
      expect(row).toMatchObject({ state: "interrupted" })
      expect(row!.artifactId).toMatch(/^art_/)
      expect((yield* kern(["jobs"], dir)).stdout).toContain("interrupted")

      // Another stop and start: the report is not given again.
      expect((yield* kern(["stop"], dir)).status).toBe(0)
      expect((yield* kern(["start"], dir)).status).toBe(0)
      yield* model.reply(FakeReply.text("fine"))
      const asked = yield* kern(["chat", "-m", "anything else?"], dir)
      expect(asked.status, asked.stderr).toBe(0)
      const all = yield* model.modelRequests
      expect(all.filter((request) => lastUser(request).includes("[job 1 interrupted"))).toHaveLength(1)
      expect(lastUser(all.at(-1)!)).toContain("anything else?")
      expect(NodeFs.readFileSync(NodePath.join(dir, "runs.txt"), "utf8")).toBe("run\n")
      expect((yield* kern(["stop"], dir)).status).toBe(0)
    })), 240_000)
})
