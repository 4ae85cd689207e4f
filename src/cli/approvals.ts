import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Console, Effect, Option } from "effect"
import { neutralizeControls } from "../channels/terminalSafe.js"
import { findRunning } from "../channels/web/running.js"
import { loadConfig } from "../config/AgentConfig.js"
import { clip } from "../config/clip.js"
import { NotAnAgentFolder } from "../config/errors.js"
import { agentZone, localIso } from "../session/envelope.js"
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

export interface ListArgs {
  readonly dir: string
  readonly json: boolean
}

const oneLine = (args: unknown): string => {
  const json = JSON.stringify(args)
  const text = json === undefined ? String(args) : json
  return clip(text, 200)
}

/**
 * `kern approvals`: what the running agent waits for (id, tool, arguments as its HTTP door redacted them, who asked,
 * when it is denied unanswered) and how to answer. Nothing waits when no agent runs: approvals live in its memory.
 */
export const list = (args: ListArgs) =>
  Effect.gen(function*() {
    const loaded = yield* loadConfig(args.dir)
    if (!loaded.fileExists) return yield* new NotAnAgentFolder({ dir: args.dir })
    const up = yield* findRunning(loaded)
    if (Option.isNone(up)) {
      if (args.json) return yield* Console.log(JSON.stringify({ running: false, approvals: [] }))
      return yield* Console.log(`${loaded.config.name} is not running: nothing waits for approval`)
    }
    const { approvals } = yield* up.value.client.approvals.pipe(
      Effect.catchTag("ClientError", (error) => Effect.fail(new CommandFailed({ message: error.message })))
    )
    if (args.json) return yield* Console.log(JSON.stringify({ running: true, approvals }))
    if (approvals.length === 0) return yield* Console.log("nothing waits for approval")
    const zone = agentZone(loaded.config.timezone)
    for (const pending of approvals) {
      yield* Console.log(neutralizeControls([
        `${pending.id}  ${pending.toolId} (${pending.reason})`,
        `  arguments: ${oneLine(pending.args)}`,
        `  asked by ${pending.interface}${pending.channel === pending.interface ? "" : ` ${pending.channel}`} user ${pending.userId} at ${localIso(Date.parse(pending.requestedAt), zone)}`,
        `  denied at ${localIso(Date.parse(pending.expiresAt), zone)} without an answer: kern approve ${pending.id} / kern deny ${pending.id}`
      ].join("\n")))
    }
  }).pipe(Effect.provide(NodeHttpClient.layerUndici))
