// `kern status [dir]` as the command line reads it itself: the report (src/channels/web/statusReport.ts) with a hosted
// agent's host asked over its routes (statusHost.ts) and the running agent over its HTTP API (statusLive.ts), each
// imported only when needed. A running agent is asked for the whole report first by src/quick/statusAsk.ts.
import { Console, Effect } from "effect"
import { statusOutput, type StatusOutput } from "../channels/web/statusReport.js"
import type { StatusArgs } from "./commands.js"
import { resolveDir } from "./dirs.js"
import { CommandFailed } from "./errors.js"

/** The report of the folder the arguments name, made by the command line. */
export const report = (args: StatusArgs) =>
  Effect.flatMap(resolveDir(args.dir, args.dirFlag), (dir) =>
    statusOutput({ dir }, args.json, {
      hosted: (loaded) => Effect.flatMap(Effect.promise(() => import("./statusHost.js")), (module) => module.hostedStatus(loaded)),
      live: (loaded) => Effect.flatMap(Effect.promise(() => import("./statusLive.js")), (module) => module.liveStatus(loaded))
    }))

/** Prints the report as the command ends: stdout, then its failure, if any. */
export const print = (output: StatusOutput) =>
  Effect.gen(function*() {
    yield* Console.log(output.stdout)
    if (output.failure !== null) return yield* new CommandFailed({ message: output.failure })
  })

export const run = (args: StatusArgs) => Effect.flatMap(report(args), print)
