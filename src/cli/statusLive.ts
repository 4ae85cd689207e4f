// What `kern status` asks the folder's running agent, in a module of its own: status imports it (the agent's HTTP API,
// its schemas and node's http client) only when a live process holds the folder's lock.
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Effect, Option } from "effect"
import type { LoadedConfig } from "../config/AgentConfig.js"
import { findRunning } from "../channels/web/running.js"

/**
 * The running agent's address and pid, its GET /status (none when it does not answer it), and what waits for approval
 * by id (its GET /approvals, asked only when its status counts some).
 */
export const liveStatus = (loaded: LoadedConfig) =>
  Effect.gen(function*() {
    const live = yield* findRunning(loaded)
    const status = Option.isSome(live) ? yield* Effect.option(live.value.client.status) : Option.none()
    const approvals = Option.isSome(status) ? status.value.runtime.approvals : null
    const waiting = Option.isSome(live) && approvals !== null && approvals > 0
      ? Option.match(yield* Effect.option(live.value.client.approvals), {
        onNone: () => [],
        onSome: (answer) =>
          answer.approvals.map((pending) => ({ id: pending.id, toolId: pending.toolId, userId: pending.userId, expiresAt: pending.expiresAt }))
      })
      : []
    return {
      server: Option.map(live, (live) => ({ url: live.client.baseUrl, pid: live.health.pid })),
      status,
      waiting
    }
  }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layer))
