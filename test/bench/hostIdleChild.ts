// A host's wake sources over the passive agents whose folders are listed (one per line) in the file argv[2], with
// nothing else running: what host.idle.passive measures. Prints `ready <n>` once every agent is read and watched.
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Context, Effect, Layer, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import type { AgentInfo } from "../../src/host/AgentHandle.js"
import { HostAgents } from "../../src/host/HostAgents.js"
import * as WakeSources from "../../src/host/wakeSources/wakeSources.js"

const dirs = NodeFs.readFileSync(process.argv[2] ?? "", "utf8").split("\n").filter((line) => line !== "")
const agents: ReadonlyArray<AgentInfo> = dirs.map((dir) => ({ name: NodePath.basename(NodePath.dirname(dir)), dir, state: "passive" }))
const host = Layer.succeed(HostAgents, {
  list: Effect.succeed(agents),
  wake: (name, reason) => Effect.sync(() => process.stdout.write(`woke ${name}: ${reason}\n`)),
  changes: Stream.concat(Stream.fromIterable(agents), Stream.never),
  handle: () => Effect.succeedNone,
  reconcile: () => Effect.void
})

const main = Effect.gen(function*() {
  const sources = Context.get(yield* Layer.build(WakeSources.layer), WakeSources.WakeSources)
  while ((yield* sources.status).passive < agents.length) yield* Effect.sleep("20 millis")
  process.stdout.write(`ready ${agents.length}\n`)
  return yield* Effect.never
}).pipe(
  Effect.scoped,
  Effect.provide(host),
  Effect.provide(Layer.succeed(ProcessEnv, {})),
  Effect.provide(NodeContext.layer),
  Effect.provide(NodeHttpClient.layerUndici)
)

Effect.runFork(main)
