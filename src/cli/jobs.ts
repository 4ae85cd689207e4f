import { Clock, Console, Effect, Layer } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import * as Layers from "../runtime/layers.js"
import * as AgentDatabase from "../runtime/agentDatabase.js"
import { JobStore } from "../tools/JobStore.js"
import { endDescription, formatDuration } from "../tools/jobText.js"
import { neutralizeControls } from "../channels/terminalSafe.js"
import { CommandFailed } from "./errors.js"
import { table } from "./table.js"

// Reads kern.db alone (WAL: beside a running agent or without one); takes no lock and changes nothing.

export interface JobsArgs {
  readonly dir: string
  readonly json: boolean
}

const jobsLayer = (dir: string) => {
  const config = Layers.configLayer(dir, (line) => Console.error(`kern: ${line}`))
  const database = AgentDatabase.layerAsIs
  return JobStore.Default.pipe(Layer.provideMerge(database), Layer.provideMerge(config))
}

/** `kern jobs [dir]`: the latest background jobs of every conversation, newest first. */
export const list = (args: JobsArgs) =>
  Effect.gen(function*() {
    const { config } = yield* AgentConfig
    const store = yield* JobStore
    const rows = yield* store.recent(null, 100).pipe(Effect.mapError((error) => new CommandFailed({ message: error.message })))
    const now = yield* Clock.currentTimeMillis
    if (args.json) return yield* Console.log(JSON.stringify(rows))
    if (rows.length === 0) return yield* Console.log("no background jobs")
    yield* Console.log(neutralizeControls(table(
      ["id", "state", "time", "started", "conversation", "command"],
      rows.map((row) => [
        String(row.id),
        endDescription(row, config.jobs.maxLifetimeMs),
        formatDuration((row.endedAtMs ?? now) - row.startedAtMs),
        new Date(row.startedAtMs).toISOString().replace("T", " ").slice(0, 19),
        row.conversation,
        row.command.length > 80 ? `${row.command.slice(0, 80)}…` : row.command
      ])
    )))
  }).pipe(Effect.provide(jobsLayer(args.dir)))
