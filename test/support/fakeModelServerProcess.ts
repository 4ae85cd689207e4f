// The fake model server in a process of its own, answering "ok" to every model request: benchmarks run it apart so
// that its work (parsing an 18 MB prompt) never counts as kern's. Prints its base URL on the first line of stdout.
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { FakeReply, makeWith } from "./fakeModelServer.js"

const program = Effect.scoped(Effect.gen(function*() {
  const server = yield* makeWith({ record: false, fallback: FakeReply.text("ok") })
  yield* Effect.sync(() => process.stdout.write(`${server.baseURL}\n`))
  return yield* Effect.never
}))

NodeRuntime.runMain(program)
