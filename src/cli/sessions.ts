import { Console, Effect, Layer } from "effect"
import * as AgentConfig from "../config/AgentConfig.js"
import { SessionStore } from "../session/SessionStore.js"
import { NotAnAgentFolder } from "../config/errors.js"
import { table } from "./table.js"

export interface SessionsArgs {
  readonly dir: string
  readonly json: boolean
}

export const list = (args: SessionsArgs) =>
  Effect.gen(function*() {
    const { fileExists } = yield* AgentConfig.AgentConfig
    if (!fileExists) {
      return yield* new NotAnAgentFolder({ dir: args.dir })
    }
    const store = yield* SessionStore
    const sessions = yield* store.list
    if (args.json) return yield* Console.log(JSON.stringify(sessions))
    if (sessions.length === 0) return yield* Console.log("no sessions yet")
    yield* Console.log(table(
      ["session", "messages", "size", "updated", ""],
      sessions.map((s) => [s.id, String(s.messages), `${s.bytes} B`, s.updatedAt, s.active ? "active" : ""])
    ))
  }).pipe(Effect.provide(SessionStore.Default.pipe(Layer.provideMerge(AgentConfig.layer(args.dir)))))
