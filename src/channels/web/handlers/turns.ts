import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { operatorUserId } from "../../../turn/MessageQueue.js"
import { TurnStops } from "../../../turn/TurnStops.js"
import { notFound } from "../ApiError.js"
import { KernApi } from "../KernApi.js"

/** Stops as the operator (the API's token is the operator's): the turn ends as Stopped, what it said kept. */
export const layer = HttpApiBuilder.group(KernApi, "turns", (handlers) =>
  Effect.gen(function*() {
    const stops = yield* TurnStops
    const ids = (turns: ReadonlyArray<{ readonly turnId: string }>) => ({ stopped: turns.map((turn) => turn.turnId) })
    return handlers
      .handle("stop", ({ path }) =>
        Effect.flatMap(stops.stop(path.turnId, operatorUserId), (stopped) =>
          stopped.length === 0 ? Effect.fail(notFound(`no running turn ${path.turnId} (it may have ended already)`)) : Effect.succeed(ids(stopped))))
      .handle("stopAll", () => Effect.map(stops.stopOperators(operatorUserId), ids))
  }))
