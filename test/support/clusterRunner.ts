// One runner of kern's multi-runner cluster on PostgreSQL, as its own process, for the failover test and bench:
// `node --import tsx test/support/clusterRunner.ts '<json>'` with { url, name, port, lockExpirationMs?, pollMs?, hold? }
// (without lockExpirationMs and pollMs, the defaults of MultiRunner.ts).
//
// It builds what kern's host builds (AgentsLive.layer: the multi-runner cluster on a socket at 127.0.0.1:port, the
// journal and the runners' registry in the database, shard locks as advisory locks, and the Agent entity), with an
// AgentPlacement that opens the conversations of a stand-in agent runtime whose `receive` writes to the database
// (its channel is the conversation the sender named): a row in runner_attempts for every call (who ran it, when), and
// a row in runner_handled per message, deduped by (agent, inbox id) as a runtime's receive dedupes by inbox id, and
// a row in runner_holds for each time the cluster held an agent here (started_at, and ended_at once it let go).
// The tables are createRunnerTables' (clusterRunners.ts). With `hold`, a message whose text is "hold" is
// recorded and then never completes (a runner killed in the middle of a handler).
//
// It prints `ready` once built; each stdin line `send <agent> <conversation> <id> <text>` hands a message to the
// agent's entity from this runner and prints `acked <id>` once the journal holds it (or `failed <id> <reason>`).
// SIGTERM stops it cleanly; kill -9 is a crash.
import { NodeRuntime } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Redacted, Runtime } from "effect"
import * as NodeReadline from "node:readline"
import { AgentPlacement, AgentReceivers, deliverTo } from "../../src/runtime/cluster/AgentEntity.js"
import * as AgentsLive from "../../src/runtime/cluster/AgentsLive.js"
import type { RunnerOptions } from "./clusterRunners.js"

const options = JSON.parse(process.argv[2] ?? "{}") as RunnerOptions

const program = Effect.gen(function*() {
  const runtime = yield* Effect.runtime<never>()
  const lines = NodeReadline.createInterface({ input: process.stdin })
  const senders = new Map<string, Effect.Effect.Success<ReturnType<typeof deliverTo>>>()
  const context = yield* Effect.context<import("@effect/cluster").Sharding.Sharding>()
  lines.on("line", (line) => {
    const [command, agent, conversation, id, ...text] = line.split(" ")
    if (command !== "send" || agent === undefined || conversation === undefined || id === undefined) return
    const send = Effect.gen(function*() {
      let deliver = senders.get(agent)
      if (deliver === undefined) {
        deliver = yield* deliverTo(agent)
        senders.set(agent, deliver)
      }
      yield* deliver(
        { id: Number(id), interface: "http", channel: conversation, userId: "operator", text: text.join(" "), receivedAtMs: Date.now() },
        conversation
      )
    }).pipe(
      Effect.provide(context),
      Effect.match({
        onSuccess: () => process.stdout.write(`acked ${id}\n`),
        onFailure: (error) => process.stdout.write(`failed ${id} ${error.message}\n`)
      })
    )
    Runtime.runFork(runtime)(send)
  })
  process.stdout.write("ready\n")
  return yield* Effect.never
})

/** The stand-in runtime of every agent: its `receive` registered while the cluster holds the agent here. */
const placement = Layer.effect(
  AgentPlacement,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      wake: () => Effect.void,
      url: "",
      // The agent's runtime opens its conversations while the cluster holds it here; runner_holds keeps when.
      hold: (agent: string, conversations) =>
        Effect.gen(function*() {
          const [row] = yield* sql<{ id: number }>`INSERT INTO runner_holds (agent, runner, started_at)
            VALUES (${agent}, ${options.name}, clock_timestamp()) RETURNING id`
          yield* Effect.addFinalizer(() =>
            sql`UPDATE runner_holds SET ended_at = clock_timestamp() WHERE id = ${row!.id}`.pipe(Effect.ignore)
          )
          yield* conversations.open((delivery) =>
            Effect.gen(function*() {
              yield* sql`INSERT INTO runner_attempts (agent, conversation, inbox_id, runner, at)
                VALUES (${agent}, ${delivery.channel}, ${delivery.id}, ${options.name}, clock_timestamp())`
              yield* sql`INSERT INTO runner_handled (agent, conversation, inbox_id, runner, at)
                VALUES (${agent}, ${delivery.channel}, ${delivery.id}, ${options.name}, clock_timestamp())
                ON CONFLICT (agent, inbox_id) DO NOTHING`
              if (options.hold === true && delivery.text === "hold") yield* Effect.never
            }).pipe(Effect.orDie)
          )
        }).pipe(Effect.orDie)
    }
  })
)

const cluster = AgentsLive.layer({
  address: { host: "127.0.0.1", port: options.port },
  shardsPerGroup: 16,
  lockExpiration: options.lockExpirationMs === undefined ? undefined : `${options.lockExpirationMs} millis`,
  messagePollInterval: options.pollMs === undefined ? undefined : `${options.pollMs} millis`
})

const layer = cluster.pipe(
  Layer.provideMerge(placement),
  Layer.provideMerge(AgentReceivers.Default),
  Layer.provideMerge(PgClient.layer({ url: Redacted.make(options.url), maxConnections: 4 }))
)

// SIGTERM interrupts the program: the cluster's scope closes, the runner gives up its shards and leaves the
// runners' registry, and the others take its agents without waiting for its locks to expire (a runner's restart).
NodeRuntime.runMain(program.pipe(Effect.provide(layer)))
