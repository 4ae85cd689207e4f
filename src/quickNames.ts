// The paired users' names for the quick `kern sessions list` (src/quick.ts), as a bundle of their own
// (dist/quickNames.cjs): the database code stays out of dist/quick.cjs and its code cache, which every listing loads,
// and is loaded only when a session is not the operator's. What crosses between the two bundles is plain data.
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { pairedUsers } from "./cli/pairedUsers.js"
import * as AgentConfig from "./config/AgentConfig.js"
import { ProcessEnv } from "./config/ProcessEnv.js"
import type { PairedUser } from "./users/conversationLabels.js"

export type NamesResult = { readonly users: ReadonlyArray<PairedUser> } | { readonly error: string }

/** The paired users of the agent in `dir`, or why they could not be read. */
export const pairedUsersIn = (dir: string): Promise<NamesResult> =>
  Effect.runPromise(
    pairedUsers.pipe(
      Effect.map((users): NamesResult => ({
        users: users.map((u) => ({ interface: u.interface, userId: u.userId, chatId: u.chatId, displayName: u.displayName }))
      })),
      Effect.provide(AgentConfig.layer(dir)),
      Effect.catchAll((error) => Effect.succeed<NamesResult>({ error: error.message })),
      Effect.provideService(ProcessEnv, process.env),
      Effect.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer))
    )
  )
