import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcess } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { bearer, request, startServer, token } from "../channels/web/harness.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { runKern, stdoutShows } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"

const env = { OPENROUTER_API_KEY: "sk-test" }

/** The `_tag`s of the session's lines, header left out. */
const sessionTags = (dir: string) => {
  const sessions = NodePath.join(dir, ".kern", "sessions")
  return NodeFs.readdirSync(sessions).filter((name) => name.endsWith(".jsonl")).flatMap((name) =>
    NodeFs.readFileSync(NodePath.join(sessions, name), "utf8").split("\n").filter((line) => line !== "").map((line) =>
      String((JSON.parse(line) as { _tag: unknown })._tag)
    ).filter((tag) => tag !== "session")
  )
}

describe("/stop in the TUI", () => {
  it.live("in-process: /stop ends the running turn as Stopped, never reaches the model, and the TUI goes on", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL, { recall: false })
      yield* server.reply(FakeReply.text("Counting slowly: one, two, three", { hangAfter: 3 }), FakeReply.text("Still here."))
      let child: ChildProcess | undefined
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      const done = runKern(["tui"], { cwd: dir, env, stdin: true, onSpawn: (spawned) => (child = spawned) })
      const input = child!.stdin!
      const begun = stdoutShows(child!, "Counting")
      input.write("count for a long time\n")
      yield* Effect.promise(() => begun)
      const stopped = stdoutShows(child!, "kern: stopped by the operator")
      input.write("/stop\n")
      yield* Effect.promise(() => stopped)
      const answered = stdoutShows(child!, "Still here.")
      input.write("are you there?\n")
      yield* Effect.promise(() => answered)
      input.end("/quit\n")
      const result = yield* Effect.promise(() => done)
      expect(result.status).toBe(0)
      expect(result.stdout).toContain("stopping the running turn")
      const requests = yield* server.modelRequests
      expect(requests).toHaveLength(2)
      expect(JSON.stringify(requests.map((r) => r.body))).not.toContain("/stop")
      expect(sessionTags(dir)).toEqual(["user", "assistant", "turn-failed", "user", "assistant"])
    })), 120_000)

  it.live("attached to the running agent: /stop goes through POST /stop; with nothing running it says so", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, model, dir, port } = yield* startServer({ config: { recall: false } })
      const configFile = NodePath.join(dir, ".kern", "config.json")
      NodeFs.writeFileSync(configFile, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(configFile, "utf8")), port }))
      NodeFs.writeFileSync(NodePath.join(dir, ".kern", ".env"), `KERN_AUTH_TOKEN=${token}\n`, { mode: 0o600 })
      yield* model.reply(FakeReply.text("A long answer begins", { hangAfter: 2 }))
      let child: ChildProcess | undefined
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      const done = runKern(["tui", dir], { env, stdin: true, onSpawn: (spawned) => (child = spawned) })
      const idle = stdoutShows(child!, "no turn is running")
      child!.stdin!.write("/stop\n")
      yield* Effect.promise(() => idle)
      const stopped = stdoutShows(child!, "kern: stopped by the operator")
      child!.stdin!.write("begin the long answer\n")
      yield* model.awaitRequests(1)
      child!.stdin!.write("/stop\n")
      yield* Effect.promise(() => stopped)
      child!.stdin!.end("/quit\n")
      expect((yield* Effect.promise(() => done)).status).toBe(0)
      const history = yield* request(`${base}/history`, { headers: bearer })
      const tags = (history.json as { messages: ReadonlyArray<{ message: { _tag: string } }> }).messages.map((m) => m.message._tag)
      expect(tags.at(-1)).toBe("turn-failed")
    })), 120_000)
})
