import { Clock, Effect, Either, Option, Schema } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import { confinedAudience } from "../kernel/Audience.js"
import { RunContext } from "../kernel/RunContext.js"
import { toolFailure } from "../kernel/ToolFailure.js"
import { originOf } from "./Followups.js"
import { creatorOf, deliveryOrigin } from "./schedules/delivery.js"
import { draftSchedule } from "./schedules/newSchedule.js"
import { MisfirePolicy } from "./schedules/ScheduleRow.js"
import { ScheduleStore } from "./schedules/ScheduleStore.js"
import { heartbeatNotRemovable, heartbeatScheduleId, heartbeatView } from "./schedules/heartbeatEntry.js"
import { scheduleView } from "./schedules/scheduleView.js"
import { whenForms } from "./schedules/whenText.js"
import type { ToolMetadata } from "./toolMetadata.js"

export const ScheduleArgs = Schema.Struct({
  action: Schema.Literal("add", "list", "remove").annotations({ description: "add a schedule, list them, or remove one by id" }),
  at: Schema.optional(Schema.String).annotations({ description: `add, one-shot: when; ${whenForms}` }),
  cron: Schema.optional(Schema.String).annotations({
    description: "add, recurring: a cron expression (minute hour day month weekday, e.g. \"0 9 * * 1-5\"), in timezone"
  }),
  timezone: Schema.optional(Schema.String).annotations({ description: "add: an IANA zone (default: the agent's timezone)" }),
  prompt: Schema.optional(Schema.String).annotations({ description: "add: what you are to do when it fires (it comes to you as a message)" }),
  deliverTo: Schema.optional(Schema.String).annotations({
    description: "add: a paired user (telegram:42, as kern users lists them) whose chat each firing's reply goes to"
  }),
  misfire: Schema.optional(MisfirePolicy).annotations({
    description: "add: runs missed while the agent was down: skip them (default for cron), run once (default for at), or all within graceMinutes"
  }),
  graceMinutes: Schema.optional(Schema.Int).annotations({ description: "add, misfire all: how late a missed run may still run (default 1440)" }),
  id: Schema.optional(Schema.Int).annotations({ description: "remove: the schedule's id" })
})
export type ScheduleArgs = typeof ScheduleArgs.Type

export const scheduleTool: ToolMetadata = {
  toolId: "schedule",
  name: "Schedule",
  description: "Act later or regularly: add a schedule whose prompt comes back to you as a message in this conversation " +
    "when it is due, e.g. { action: \"add\", at: \"in 3 days at 09:00\", prompt: \"Remind the operator of the dentist\" } or " +
    "{ action: \"add\", cron: \"0 8 * * 1-5\", prompt: \"Morning brief\", deliverTo: \"telegram:42\" }; list them " +
    "(with runs fired and missed) or remove one by id.",
  safetyClass: "LOCAL_WRITE",
  idempotent: false,
  timeoutMs: 10_000,
  scope: "write"
}

/**
 * The schedule tool: a schedule fires as a turn in the conversation that added it (the running agent's Scheduler);
 * a conversation other than the operator's sees, removes and delivers to its own only.
 */
export const schedule = (args: ScheduleArgs) =>
  Effect.gen(function*() {
    const store = yield* ScheduleStore
    const ctx = yield* RunContext
    const own = confinedAudience(ctx)
    const origin = originOf(ctx)
    const storage = (error: { readonly message: string }) => toolFailure("UNEXPECTED", error.message)
    const visible = (createdBy: string) => own === undefined || createdBy === creatorOf(origin)
    switch (args.action) {
      case "add": {
        const { config } = yield* AgentConfig
        const now = yield* Clock.currentTimeMillis
        const draft = draftSchedule({ ...args, prompt: args.prompt ?? "" }, now, config.timezone)
        if (Either.isLeft(draft)) return yield* toolFailure("VALIDATION_ERROR", `${draft.left}; nothing was scheduled`)
        const delivery = yield* deliveryOrigin(args.deliverTo, origin, own).pipe(
          Effect.mapError((refusal) =>
            toolFailure(
              refusal.reason === "storage" ? "UNEXPECTED" : refusal.reason === "unknown" ? "NOT_FOUND" : "PERMISSION_DENIED",
              `${refusal.message}; nothing was scheduled`
            ))
        )
        const row = yield* store.add(draft.right, { ...delivery, createdBy: creatorOf(origin) }).pipe(Effect.mapError(storage))
        const listed = yield* store.list.pipe(Effect.mapError(storage))
        const added = listed.find((s) => s.id === row.id)
        return { added: added === undefined ? { id: row.id } : scheduleView(added) }
      }
      case "list": {
        const all = yield* store.list.pipe(Effect.mapError(storage))
        const schedules = all.filter((s) => visible(s.createdBy)).map(scheduleView)
        if (own !== undefined) return { schedules }
        // The operator's conversation sees the heartbeat too (id 0): a schedule like the others, not removed like them.
        const { config } = yield* AgentConfig
        const heartbeat = heartbeatView(config, yield* store.heartbeatNext.pipe(Effect.mapError(storage)))
        return { schedules: heartbeat === undefined ? schedules : [heartbeat, ...schedules] }
      }
      case "remove": {
        if (args.id === undefined) return yield* toolFailure("VALIDATION_ERROR", "remove needs the schedule's id (list shows them)")
        if (args.id === heartbeatScheduleId && own === undefined) return yield* toolFailure("PERMISSION_DENIED", heartbeatNotRemovable)
        const found = yield* store.get(args.id).pipe(Effect.mapError(storage))
        if (Option.isNone(found) || !visible(found.value.createdBy)) {
          return yield* toolFailure("NOT_FOUND", `no schedule ${args.id} here (list shows them)`)
        }
        yield* store.remove(args.id).pipe(Effect.mapError(storage))
        return { removed: args.id }
      }
    }
  }).pipe(Effect.withSpan("kern.tools.schedule", { attributes: { action: args.action } }))
