// `kern status [dir]` as the command line reads it itself: the report (src/channels/web/statusReport.ts) with a hosted
// agent's host asked over its routes (statusHost.ts) and the running agent over its HTTP API (statusLive.ts), each
// imported only when needed. A running agent is asked for the whole report first by src/quick/statusAsk.ts.
import { Console, Effect } from "effect"
import { statusOutput } from "../channels/web/statusReport.js"
import type { StatusArgs } from "./commands.js"
import { resolveDir } from "./dirs.js"
import { CommandFailed } from "./errors.js"

export const run = (args: StatusArgs) =>
  Effect.gen(function*() {
    const dir = yield* resolveDir(args.dir, args.dirFlag)
    const output = yield* statusOutput({ dir }, args.json, {
      hosted: (loaded) => Effect.flatMap(Effect.promise(() => import("./statusHost.js")), (module) => module.hostedStatus(loaded)),
      live: (loaded) => Effect.flatMap(Effect.promise(() => import("./statusLive.js")), (module) => module.liveStatus(loaded))
    })
    yield* Console.log(output.stdout)
    if (output.failure !== null) return yield* new CommandFailed({ message: output.failure })
  })
