import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect, Either } from "effect"
import { AgentConfig } from "../../../config/AgentConfig.js"
import { operatorOrigin } from "../../../tools/Followups.js"
import { deliveryOrigin } from "../../../tools/schedules/delivery.js"
import { draftSchedule } from "../../../tools/schedules/newSchedule.js"
import { heartbeatNotRemovable, heartbeatScheduleId, heartbeatView } from "../../../tools/schedules/heartbeatEntry.js"
import { ScheduleStore } from "../../../tools/schedules/ScheduleStore.js"
import { scheduleView } from "../../../tools/schedules/scheduleView.js"
import { PairingStore } from "../../../users/PairingStore.js"
import { badRequest, NotFound, serverError } from "../ApiError.js"
import { KernApi } from "../KernApi.js"

/**
 * The schedules over HTTP, the operator's (every route of the API is: Authorization): the list, an added one (the
 * operator's conversation, or delivered to a paired user), a removed one. The running agent's Scheduler is woken by
 * the store at once. The heartbeat is listed beside them (schedule 0), and is not removed like one.
 */
export const layer = HttpApiBuilder.group(KernApi, "schedules", (handlers) =>
  Effect.gen(function*() {
    const store = yield* ScheduleStore
    const pairings = yield* PairingStore
    const { config } = yield* AgentConfig
    const listed = store.list.pipe(Effect.map((all) => all.map(scheduleView)), Effect.mapError(serverError))
    return handlers
      .handle("list", () =>
        Effect.all({
          schedules: listed,
          heartbeat: Effect.map(store.heartbeatNext.pipe(Effect.mapError(serverError)), (next) => heartbeatView(config, next) ?? null)
        }).pipe(Effect.withSpan("kern.web.schedules.list")))
      .handle("add", ({ payload }) =>
        Effect.gen(function*() {
          const draft = draftSchedule(payload, yield* Clock.currentTimeMillis, config.timezone)
          if (Either.isLeft(draft)) return yield* badRequest(payload.cron === undefined ? "at" : "cron", draft.left)
          const delivery = yield* deliveryOrigin(payload.deliverTo, operatorOrigin, undefined).pipe(
            Effect.provideService(PairingStore, pairings),
            Effect.mapError((refusal) => refusal.reason === "storage" ? serverError(refusal) : badRequest("deliverTo", refusal.message))
          )
          const row = yield* store.add(draft.right, { ...delivery, createdBy: "operator" }).pipe(Effect.mapError(serverError))
          const schedule = (yield* listed).find((s) => s.id === row.id)
          if (schedule === undefined) return yield* serverError({ message: "the added schedule was not found" })
          return { schedule }
        }).pipe(Effect.withSpan("kern.web.schedules.add")))
      .handle("remove", ({ path }) =>
        Effect.gen(function*() {
          if (path.id === heartbeatScheduleId) return yield* badRequest("id", heartbeatNotRemovable)
          if (!(yield* store.remove(path.id).pipe(Effect.mapError(serverError)))) {
            return yield* new NotFound({ error: `no schedule ${path.id}` })
          }
          return { removed: path.id }
        }).pipe(Effect.withSpan("kern.web.schedules.remove")))
  }))
