import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcess } from "node:child_process"
import { initAgentWithModel } from "../support/agentFolder.js"
import { runKern, stdoutShows } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { offeredTools, toolResultsById } from "../support/modelRequests.js"

const env = { OPENROUTER_API_KEY: "sk-test" }

describe("ask_user_question in the TUI", () => {
  it.live("the question is shown numbered; a wrong answer is refused, a number answers, the model reads it", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL, { recall: false })
      yield* server.reply(
        FakeReply.toolCalls([{ id: "q1", name: "ask_user_question", args: { question: "Which branch?", options: ["main", "staging"] } }]),
        FakeReply.text("Deploying staging.")
      )
      let child: ChildProcess | undefined
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      const done = runKern(["tui"], { cwd: dir, env, stdin: true, onSpawn: (spawned) => (child = spawned) })
      const input = child!.stdin!
      const asked = stdoutShows(child!, "2. staging")
      input.write("deploy\n")
      yield* Effect.promise(() => asked)
      const refused = stdoutShows(child!, "takes one option")
      input.write("1,2\n")
      yield* Effect.promise(() => refused)
      const answered = stdoutShows(child!, "Deploying staging.")
      input.write("2\n")
      yield* Effect.promise(() => answered)
      input.end("/quit\n")
      const result = yield* Effect.promise(() => done)
      expect(result.status).toBe(0)
      expect(result.stdout).toContain("Which branch?")
      expect(result.stdout).toContain("1. main")
      const requests = yield* server.modelRequests
      expect(requests).toHaveLength(2)
      expect(offeredTools(requests[0]!.body)).toContain("ask_user_question")
      expect(Object.values(toolResultsById(requests[1]!.body)).join("\n")).toContain("answer from operator: chose \"staging\"")
    })), 120_000)
})
