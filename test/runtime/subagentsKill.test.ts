import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { processRunning } from "../../src/storage/processState.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { killedAtEnd, recordedPid } from "../support/backgroundAgent.js"
import { runKern } from "../support/cli.js"
import { FakeReply, makeWith as makeFakeServer, type RecordedRequest } from "../support/fakeModelServer.js"

// A sub-agent in progress when its agent is killed (kill -9, mid-step) is reported to its parent's conversation as
// interrupted after the restart, exactly once, and is not run again by itself (README, "Sub-agents").

const env = { OPENROUTER_API_KEY: "sk-test" }
const kern = (args: ReadonlyArray<string>, cwd: string) => Effect.promise(() => runKern(args, { cwd, env }))

interface ChatMessage {
  readonly role: string
  readonly content: unknown
}
const messagesOf = (body: unknown) => ((body as { messages?: ReadonlyArray<ChatMessage> }).messages ?? [])
const userTexts = (body: unknown) =>
  messagesOf(body).filter((m) => m.role === "user").map((m) => typeof m.content === "string" ? m.content : JSON.stringify(m.content))
const isSubagent = (body: unknown) => userTexts(body).some((text) => text.includes("You are a sub-agent"))
const stepOf = (body: unknown) => {
  const messages = messagesOf(body)
  return messages.slice(messages.map((m) => m.role).lastIndexOf("user") + 1).filter((m) => m.role === "assistant").length
}
const subRequests = (requests: ReadonlyArray<RecordedRequest>) => requests.filter((request) => isSubagent(request.body))

interface Line {
  readonly _tag: string
  readonly text?: string
  readonly toolName?: string
}
const sessionLines = (dir: string, suffix: (name: string) => boolean) => {
  const sessions = NodePath.join(dir, ".kern/sessions")
  return NodeFs.readdirSync(sessions).filter(suffix).flatMap((name) =>
    NodeFs.readFileSync(NodePath.join(sessions, name), "utf8").trim().split("\n").map((line) => JSON.parse(line) as Line)
  )
}
const mainLines = (dir: string) => sessionLines(dir, (name) => !name.includes("_"))
const subLines = (dir: string) => sessionLines(dir, (name) => name.endsWith("_subagent-1.jsonl"))

/** Waits for a condition on files or requests, polling: a bound for a stuck test, not a timed assertion. */
const until = <E, R>(check: Effect.Effect<boolean, E, R>, what: string) =>
  Effect.gen(function*() {
    while (!(yield* check)) yield* Effect.sleep("50 millis")
  }).pipe(Effect.timeoutFail({ duration: "90 seconds", onTimeout: () => new Error(`never: ${what}`) }))

describe("sub-agents across kill -9", () => {
  it.live("a sub-agent killed mid-step is reported interrupted once after the restart, never run again", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer({
        fallback: (body) => {
          if (isSubagent(body)) {
            // A completed step (a read), then a step that never answers: the kill comes there.
            return stepOf(body) === 0
              ? FakeReply.toolCalls([{ id: "s1", name: "read", args: { path: "AGENTS.md" } }])
              : FakeReply.text("too late", { delay: "10 minutes" })
          }
          if ((userTexts(body).at(-1) ?? "").includes("[sub-agent ")) return FakeReply.text("noted")
          return stepOf(body) === 0
            ? FakeReply.toolCalls([{ id: "p1", name: "spawn", args: { task: "slow work" } }])
            : FakeReply.text("started it")
        }
      })
      const dir = initAgentWithModel(server.baseURL, { heartbeatInterval: 0, autoCommit: false })
      yield* killedAtEnd(dir)
      expect((yield* kern(["start"], dir)).status).toBe(0)
      const pid = recordedPid(dir)
      const config = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, ".kern/config.json"), "utf8")) as { port: number }
      const token = /KERN_AUTH_TOKEN=(\S+)/.exec(NodeFs.readFileSync(NodePath.join(dir, ".kern/.env"), "utf8"))?.[1] ?? ""
      const posted = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${config.port}/message`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ text: "delegate the slow work" })
        }).then((response) => response.status)
      )
      expect(posted).toBe(202)

      // The sub-agent's second step is with the model: its first is in its session.
      yield* until(Effect.map(server.modelRequests, (requests) => subRequests(requests).length >= 2), "the sub-agent's second step")
      process.kill(pid, "SIGKILL")
      yield* until(Effect.sync(() => !processRunning(pid)), "the agent to die")
      expect(subLines(dir).filter((line) => line._tag === "tool" && line.toolName === "read")).toHaveLength(1)

      expect((yield* kern(["start"], dir)).status).toBe(0)
      const interrupted = (line: Line) => line._tag === "user" && (line.text ?? "").startsWith("[sub-agent 1 interrupted: slow work]")
      yield* until(Effect.sync(() => mainLines(dir).some((line) => line._tag === "assistant" && line.text === "noted")), "the parent to answer the report")
      expect(mainLines(dir).filter(interrupted)).toHaveLength(1)
      expect((yield* kern(["stop"], dir)).status).toBe(0)

      // Another restart reports nothing again, and the sub-agent never asked the model after the kill.
      expect((yield* kern(["start"], dir)).status).toBe(0)
      expect((yield* kern(["stop"], dir)).status).toBe(0)
      expect(mainLines(dir).filter(interrupted)).toHaveLength(1)
      expect(subRequests(yield* server.modelRequests)).toHaveLength(2)
    })), 240_000)
})
