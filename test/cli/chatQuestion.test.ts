import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcess } from "node:child_process"
import { initAgentWithModel } from "../support/agentFolder.js"
import { kernBin, runCollected, runKern, stdoutShows } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { offeredTools, toolResultsById } from "../support/modelRequests.js"

const ask = FakeReply.toolCalls([{ id: "q1", name: "ask_user_question", args: { question: "Tea or coffee?", options: ["tea", "coffee"], allowText: true } }])

describe("ask_user_question in kern chat", () => {
  it.live("on a terminal: asked inline, numbered; words answer where the question takes them", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL, { recall: false })
      yield* server.reply(ask, FakeReply.text("Water it is."))
      let child: ChildProcess | undefined
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      // `script` gives kern a terminal (a pty) for stdin, stdout and stderr.
      const done = runCollected("script", ["-qfec", `${process.execPath} ${kernBin} chat -m "drink?"`, "/dev/null"], {
        cwd: dir,
        env: { OPENROUTER_API_KEY: "sk-test", TERM: "xterm" },
        stdin: true,
        onSpawn: (spawned) => (child = spawned)
      })
      yield* Effect.promise(() => stdoutShows(child!, "your answer:"))
      child!.stdin!.write("water\r")
      const result = yield* Effect.promise(() => done)
      expect(result.stdout).toContain("2. coffee")
      expect(result.stdout).toContain("Water it is.")
      const requests = yield* server.modelRequests
      expect(offeredTools(requests[0]!.body)).toContain("ask_user_question")
      expect(Object.values(toolResultsById(requests[1]!.body)).join("\n")).toContain("wrote \"water\"")
    })), 120_000)

  it.live("piped: not offered (nobody could answer)", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL, { recall: false })
      yield* server.reply(FakeReply.text("Hello."))
      const result = yield* Effect.promise(() => runKern(["chat", "-m", "hi"], { cwd: dir, env: { OPENROUTER_API_KEY: "sk-test" } }))
      expect(result.status, result.stderr).toBe(0)
      const [first] = yield* server.modelRequests
      expect(offeredTools(first!.body)).not.toContain("ask_user_question")
    })), 120_000)
})
