import { Console, Effect, Layer } from "effect"
import * as AgentConfig from "../config/AgentConfig.js"
import * as KnownSecrets from "../config/KnownSecrets.js"
import * as SessionIndex from "../session/SessionIndex.js"
import { SessionStore } from "../session/SessionStore.js"
import { NotAnAgentFolder } from "../config/errors.js"
import { table } from "./table.js"

export interface SessionsArgs {
  readonly dir: string
  readonly json: boolean
}

/**
 * Sessions with their counts from their records (.kern/session-counts/): listing never reads a whole session unless
 * it changed behind kern, and opens neither kern.db nor SQLite.
 */
const storeLayer = SessionStore.Default.pipe(Layer.provide(Layer.merge(SessionIndex.layer, KnownSecrets.layer)))

const print = (json: boolean) =>
  Effect.gen(function*() {
    const sessions = yield* (yield* SessionStore).list
    if (json) return yield* Console.log(JSON.stringify(sessions))
    if (sessions.length === 0) return yield* Console.log("no sessions yet")
    yield* Console.log(table(
      ["session", "messages", "size", "updated", "state"],
      sessions.map((s) => [s.id, String(s.messages), `${s.bytes} B`, s.updatedAt, s.active ? "active" : ""])
    ))
  })

export const list = (args: SessionsArgs) =>
  Effect.gen(function*() {
    const { fileExists } = yield* AgentConfig.AgentConfig
    if (!fileExists) {
      return yield* new NotAnAgentFolder({ dir: args.dir })
    }
    yield* print(args.json).pipe(Effect.provide(storeLayer))
  }).pipe(Effect.provide(AgentConfig.layer(args.dir)))
