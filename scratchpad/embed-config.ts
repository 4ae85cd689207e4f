// Embedding kern's layers in another Effect program: load an agent folder's configuration and open its database.
// Run with: npx tsx scratchpad/embed-config.ts ./my-agent
import { SqlClient } from "@effect/sql"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Layer } from "effect"
import { AgentConfig, Database, ProcessEnv } from "../src/index.js"

const program = Effect.gen(function*() {
  const { config, paths } = yield* AgentConfig.AgentConfig
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
  yield* Console.log(`${config.name} (${config.provider}/${config.model ?? "no model"}) at ${paths.dir}`)
  yield* Console.log(`tables: ${tables.map((table) => table.name).join(", ")}`)
})

const dir = process.argv[2] ?? "."
const ConfigLive = AgentConfig.layer(dir).pipe(
  Layer.provide(NodeContext.layer),
  Layer.provide(Layer.succeed(ProcessEnv, process.env))
)
const DatabaseLive = Layer.unwrapEffect(
  Effect.map(AgentConfig.AgentConfig, ({ paths }) => Database.layer({ filename: paths.dbFile }))
).pipe(Layer.provide(ConfigLive))

program.pipe(Effect.provide(Layer.merge(ConfigLive, DatabaseLive)), NodeRuntime.runMain)
