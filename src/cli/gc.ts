import { Console, Effect, Layer, Option } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import * as AgentLock from "../runtime/AgentLock.js"
import * as Layers from "../runtime/layers.js"
import * as AgentDatabase from "../runtime/agentDatabase.js"
import { Retention } from "../tools/retention/Retention.js"
import { reportLines } from "../tools/retention/RetentionReport.js"
import { CommandFailed } from "./errors.js"

// kern.db is opened directly, with or without a running agent: under WAL its writes and the agent's take turns, a
// batch at a time. The folder's lock decides the rest: while an agent holds it, kern.db is not vacuumed (VACUUM holds
// the write lock throughout, and the agent's turns would wait); while none does, gc holds it itself, so no agent
// starts in the middle of a VACUUM.

export interface GcArgs {
  readonly dir: string
  readonly dryRun: boolean
  readonly json: boolean
}

const gcLayer = (dir: string) => {
  const config = Layers.configLayer(dir, (line) => Console.error(`kern: ${line}`))
  const database = AgentDatabase.layerAsIs
  return Layer.mergeAll(Retention.Default, AgentLock.layer).pipe(Layer.provideMerge(database), Layer.provideMerge(config))
}

const failed = (error: { readonly message: string }) => new CommandFailed({ message: error.message })

/** `kern gc [dir] [--dry-run]`: applies retention now and says what it freed (or would free). */
export const gc = (args: GcArgs) =>
  Effect.gen(function*() {
    const lock = yield* AgentLock.AgentLock
    const retention = yield* Retention
    const holder = yield* lock.holder.pipe(Effect.mapError(failed))
    // An agent that starts between the look and the hold leaves gc without the lock: it prunes beside it, no VACUUM.
    const held = Option.isNone(holder) && !args.dryRun
      ? yield* lock.hold({ command: "kern gc", wait: 0, report: (line) => Console.error(`kern: ${line}`) }).pipe(
        Effect.as(true),
        Effect.catchTag("AgentBusy", () => Effect.succeed(false)),
        Effect.mapError(failed)
      )
      : false
    const report = yield* retention.run({ dryRun: args.dryRun, vacuum: held }).pipe(Effect.mapError(failed))
    if (args.json) return yield* Console.log(JSON.stringify(report))
    for (const line of reportLines(report)) yield* Console.log(line)
  }).pipe(Effect.scoped, Effect.provide(gcLayer(args.dir)))
