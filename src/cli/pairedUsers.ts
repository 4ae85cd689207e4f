import { Effect, Layer } from "effect"
import * as AgentDatabase from "../runtime/agentDatabase.js"
import { PairingStore } from "../users/PairingStore.js"

/**
 * The paired users in kern.db, for naming the people of the sessions `kern sessions list` shows: loaded by the
 * listing only when a session is not the operator's and kern.db holds data (src/cli/sessions.ts).
 */
export const pairedUsers = Effect.gen(function*() {
  const store = PairingStore.Default.pipe(Layer.provide(AgentDatabase.layerAsIs))
  return yield* Effect.flatMap(PairingStore, (pairings) => pairings.list).pipe(Effect.provide(store))
}).pipe(Effect.withSpan("kern.cli.sessions.pairedUsers"))
