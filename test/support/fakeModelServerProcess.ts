// The fake model server in a process of its own, answering "ok" to every model request: benchmarks run it apart so
// that its work (parsing an 18 MB prompt) never counts as kern's. Prints its base URL on the first line of stdout.
// A request whose last message is the user's and says `BENCH-JOBS-<n>` is answered with n calls of
// bash { command: "sleep 600", background: true } (the agent.idle.jobs bench's running jobs). One whose last message
// is the user's and says `BENCH-FIRE-<tag>` is answered "ok" and written to stdout as `arrived <tag> <epoch ms>`
// (when the schedule.fire.latency bench's turns reached the model).
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { FakeReply, makeWith } from "./fakeModelServer.js"

const answer = (body: Record<string, unknown>): FakeReply => {
  const messages = Array.isArray(body["messages"]) ? body["messages"] as ReadonlyArray<{ role?: string; content?: unknown }> : []
  const last = messages.at(-1)
  const text = last?.role === "user" ? JSON.stringify(last.content) : ""
  const fired = /BENCH-FIRE-([\w-]+)/.exec(text)
  if (fired !== null) process.stdout.write(`arrived ${fired[1]} ${Date.now()}\n`)
  const asked = /BENCH-JOBS-(\d+)/.exec(text)
  if (asked === null) return FakeReply.text("ok")
  return FakeReply.toolCalls(Array.from({ length: Number(asked[1]) }, (_, i) => ({
    id: `job${i}`,
    name: "bash",
    args: { command: "sleep 600", background: true }
  })))
}

const program = Effect.scoped(Effect.gen(function*() {
  const server = yield* makeWith({ record: false, fallback: answer })
  yield* Effect.sync(() => process.stdout.write(`${server.baseURL}\n`))
  return yield* Effect.never
}))

NodeRuntime.runMain(program)
