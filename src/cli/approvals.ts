import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Console, Effect, Option } from "effect"
import { findRunning } from "../channels/web/running.js"
import { loadConfig } from "../config/AgentConfig.js"
import { NotAnAgentFolder } from "../config/errors.js"
import { CommandFailed } from "./errors.js"

export interface DecideArgs {
  readonly id: string
  readonly dir: string
  readonly json: boolean
}

/**
 * `kern approve <id>` / `kern deny <id>`: answers an approval the running agent waits for, as the operator. Approvals
 * live in the running agent's memory, so there must be one.
 */
const decide = (approved: boolean) => (args: DecideArgs) =>
  Effect.gen(function*() {
    const loaded = yield* loadConfig(args.dir)
    if (!loaded.fileExists) return yield* new NotAnAgentFolder({ dir: args.dir })
    const up = yield* findRunning(loaded)
    if (Option.isNone(up)) {
      return yield* new CommandFailed({
        message: `${loaded.config.name} is not running, so nothing waits for approval (approvals live in the running agent)`
      })
    }
    const answer = yield* up.value.client.decide(args.id, approved).pipe(
      Effect.catchTag("ClientError", (error) => Effect.fail(new CommandFailed({ message: error.message })))
    )
    yield* Console.log(
      args.json ? JSON.stringify(answer) : `${answer.id} ${answer.approved ? "approved" : "denied"} (by ${answer.by})`
    )
  }).pipe(Effect.provide(NodeHttpClient.layerUndici))

export const approve = decide(true)
export const deny = decide(false)
