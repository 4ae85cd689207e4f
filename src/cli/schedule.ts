import { Clock, Console, Effect, Either, Layer, Option } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import * as Layers from "../runtime/layers.js"
import * as AgentDatabase from "../runtime/agentDatabase.js"
import { operatorOrigin } from "../tools/Followups.js"
import { deliveryOrigin } from "../tools/schedules/delivery.js"
import { heartbeatNotRemovable, heartbeatScheduleId, heartbeatView } from "../tools/schedules/heartbeatEntry.js"
import { draftSchedule } from "../tools/schedules/newSchedule.js"
import type { MisfirePolicy } from "../tools/schedules/ScheduleRow.js"
import { ScheduleStore } from "../tools/schedules/ScheduleStore.js"
import { scheduleView } from "../tools/schedules/scheduleView.js"
import { PairingStore } from "../users/PairingStore.js"
import { CommandFailed, UsageError } from "./errors.js"
import { table } from "./table.js"

// Like `kern users`, these commands write kern.db whether or not an agent runs: kern.db is the truth, and a running
// agent sees a schedule added here at its next poll of kern.db (Scheduler, within 10 seconds).

const scheduleLayer = (dir: string) => {
  const config = Layers.configLayer(dir, (line) => Console.error(`kern: ${line}`))
  const database = AgentDatabase.layerAsIs
  return Layer.merge(ScheduleStore.Default, PairingStore.Default).pipe(Layer.provideMerge(database), Layer.provideMerge(config))
}

const failed = (error: { readonly message: string }) => new CommandFailed({ message: error.message })

export interface ScheduleAddArgs {
  readonly dir: string
  readonly prompt: string
  readonly at: Option.Option<string>
  readonly cron: Option.Option<string>
  readonly timezone: Option.Option<string>
  readonly deliverTo: Option.Option<string>
  readonly misfire: Option.Option<MisfirePolicy>
  readonly graceMinutes: Option.Option<number>
  readonly json: boolean
}

/** `kern schedule add`: the operator's, firing in the operator's conversation (or delivered to a paired user's chat). */
export const add = (args: ScheduleAddArgs) =>
  Effect.gen(function*() {
    const { config } = yield* AgentConfig
    const store = yield* ScheduleStore
    const draft = draftSchedule({
      prompt: args.prompt,
      at: Option.getOrUndefined(args.at),
      cron: Option.getOrUndefined(args.cron),
      timezone: Option.getOrUndefined(args.timezone),
      misfire: Option.getOrUndefined(args.misfire),
      graceMinutes: Option.getOrUndefined(args.graceMinutes)
    }, yield* Clock.currentTimeMillis, config.timezone)
    if (Either.isLeft(draft)) return yield* new UsageError({ message: draft.left })
    const delivery = yield* deliveryOrigin(Option.getOrUndefined(args.deliverTo), operatorOrigin, undefined).pipe(
      Effect.mapError((refusal) => new CommandFailed({ message: `--deliver-to: ${refusal.message}` }))
    )
    const row = yield* store.add(draft.right, { ...delivery, createdBy: "operator" }).pipe(Effect.mapError(failed))
    const added = (yield* store.list.pipe(Effect.mapError(failed))).find((s) => s.id === row.id)
    if (args.json) return yield* Console.log(JSON.stringify(added === undefined ? { id: row.id } : scheduleView(added)))
    yield* Console.log(`schedule ${row.id} added: next ${added === undefined ? "" : scheduleView(added).next}`)
  }).pipe(Effect.provide(scheduleLayer(args.dir)))

export interface ScheduleListArgs {
  readonly dir: string
  readonly json: boolean
}

/** `kern schedule list`: the heartbeat and every schedule, when each next fires, and their runs fired and missed. */
export const list = (args: ScheduleListArgs) =>
  Effect.gen(function*() {
    const { config } = yield* AgentConfig
    const store = yield* ScheduleStore
    const all = (yield* store.list.pipe(Effect.mapError(failed))).map(scheduleView)
    const heartbeat = heartbeatView(config, yield* store.heartbeatNext.pipe(Effect.mapError(failed)))
    if (args.json) return yield* Console.log(JSON.stringify(heartbeat === undefined ? all : [heartbeat, ...all]))
    if (all.length === 0 && heartbeat === undefined) return yield* Console.log("no schedules (kern schedule add, or ask the agent)")
    const beat = heartbeat === undefined ? [] : [[
      `${heartbeat.id} (heartbeat)`,
      heartbeat.when,
      heartbeat.timezone,
      heartbeat.next ?? "when the agent runs",
      "",
      "",
      "",
      "heartbeatInterval: 0 turns it off"
    ]]
    yield* Console.log(table(
      ["id", "when", "zone", "next", "fired", "missed", "deliver to", "prompt"],
      [...beat, ...all.map((s) => [
        String(s.id),
        s.when,
        s.timezone,
        s.next ?? "done",
        String(s.fired),
        s.missed === 0 ? "0" : `${s.missed} (last ${s.lastMissed})`,
        s.deliverTo ?? "",
        s.prompt.length > 40 ? `${s.prompt.slice(0, 39)}…` : s.prompt
      ])]
    ))
  }).pipe(Effect.provide(scheduleLayer(args.dir)))

export interface ScheduleRemoveArgs {
  readonly dir: string
  readonly id: number
}

/** `kern schedule rm <id>`: it never fires again; its record of runs goes with it. The heartbeat is refused. */
export const remove = (args: ScheduleRemoveArgs) =>
  Effect.gen(function*() {
    if (args.id === heartbeatScheduleId) return yield* new CommandFailed({ message: heartbeatNotRemovable })
    const store = yield* ScheduleStore
    if (!(yield* store.remove(args.id).pipe(Effect.mapError(failed)))) {
      return yield* new CommandFailed({ message: `no schedule ${args.id} (kern schedule list shows them)` })
    }
    yield* Console.log(`schedule ${args.id} removed`)
  }).pipe(Effect.provide(scheduleLayer(args.dir)))
