import { Context, Deferred, Effect, Layer, Ref } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import { type Delivery, Conversations } from "../../src/runtime/Conversations.js"
import * as ConversationsLive from "../../src/runtime/cluster/ConversationsLive.js"
import { Inbox, layerSql as inboxLayer } from "../../src/runtime/Inbox.js"
import * as Database from "../../src/storage/Database.js"
import type { Bench } from "./bench.js"

/**
 * What a conversation message costs through the durable entity, against the same work by a direct call: the message
 * stored in kern.db's inbox, then handed to the conversation, which takes it (the runtime queues it there) and is
 * done (recorded); the journal pruned as after each turn. The direct call skips only the entity: the journal's write,
 * the delivery through the cluster, the reply's write and the prune.
 */
const roundtrip = (runs: number) => async () => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kern-bench-"))
  try {
    return await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const database = Database.layer({ filename: NodePath.join(dir, "kern.db") })
      const context = yield* Layer.build(Layer.mergeAll(ConversationsLive.layer, inboxLayer).pipe(Layer.provideMerge(database)))
      const inbox = Context.get(context, Inbox)
      const taken = yield* Ref.make(new Map<number, Deferred.Deferred<void>>())
      const receive = (delivery: Delivery) =>
        Effect.flatMap(Ref.get(taken), (waits) => {
          const waiting = waits.get(delivery.id)
          return waiting === undefined ? Effect.void : Deferred.succeed(waiting, undefined)
        })
      const door = yield* Context.get(context, Conversations).open(receive)
      const message = { interface: "cli", channel: "terminal", userId: "operator", text: "hello there" }
      const once = (hand: (entry: Delivery) => Effect.Effect<void, unknown>, prune: Effect.Effect<void>) =>
        Effect.gen(function*() {
          const start = performance.now()
          const entry = yield* inbox.add(message)
          const done = yield* Deferred.make<void>()
          yield* Ref.update(taken, (waits) => new Map([...waits, [entry.id, done]]))
          yield* hand(entry)
          yield* Deferred.await(done)
          yield* prune
          return performance.now() - start
        })
      const samples: Array<number> = []
      const baseline: Array<number> = []
      for (let i = 0; i < runs + 20; i++) {
        const durable = yield* once((entry) => door.deliver(entry, "main"), door.prune)
        const direct = yield* once(receive, Effect.void)
        // The first rounds warm the JIT and the database file for both.
        if (i >= 20) {
          samples.push(durable)
          baseline.push(direct)
        }
      }
      return { samples, baseline }
    })))
  } finally {
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}

export const benches: ReadonlyArray<Bench> = [
  { name: "runtime.message.roundtrip", unit: "ms", run: roundtrip(200) }
]
