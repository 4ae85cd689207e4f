import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { AgentConfig } from "../../../config/AgentConfig.js"
import { AgentRuntime } from "../../../runtime/AgentRuntime.js"
import { SessionStore } from "../../../session/SessionStore.js"
import { labelConversation } from "../../../users/conversationLabels.js"
import { PairingStore } from "../../../users/PairingStore.js"
import { serverError } from "../ApiError.js"
import { historyPage, sessionActivity, sessionFile } from "../inspect.js"
import { KernApi } from "../KernApi.js"

/**
 * The sessions of every conversation, each with its person and channel; a new one; any session's activity and its
 * messages a page at a time (the operator's API: it opens every conversation).
 */
export const layer = HttpApiBuilder.group(KernApi, "sessions", (handlers) =>
  Effect.gen(function*() {
    const { paths } = yield* AgentConfig
    const runtime = yield* AgentRuntime
    const sessions = yield* SessionStore
    const pairings = yield* PairingStore
    return handlers
      .handle("list", () =>
        Effect.gen(function*() {
          const current = (yield* runtime.currentSession).id
          const all = yield* sessions.list.pipe(Effect.mapError(serverError))
          const users = yield* pairings.list.pipe(Effect.mapError(serverError))
          return {
            currentSessionId: current,
            sessions: all.map((s) => ({
              id: s.id,
              createdAt: s.createdAt,
              messages: s.messages,
              bytes: s.bytes,
              modifiedAt: s.updatedAt,
              current: s.id === current,
              ...labelConversation(s.conversation, users)
            }))
          }
        }))
      .handle("create", () => Effect.map(runtime.newSession().pipe(Effect.mapError(serverError)), (sessionId) => ({ sessionId })))
      .handle("activity", ({ path }) =>
        Effect.gen(function*() {
          const file = yield* sessionFile(paths.sessionsDir, path.id)
          return yield* sessionActivity(file, path.id).pipe(Effect.catchTag("SystemError", "BadArgument", serverError))
        }))
      .handle("history", ({ urlParams }) =>
        Effect.gen(function*() {
          const id = urlParams.session ?? (yield* runtime.currentSession).id
          const file = yield* sessionFile(paths.sessionsDir, id, "session")
          return yield* historyPage(file, id, urlParams.limit ?? 50, urlParams.before).pipe(
            Effect.catchTag("SystemError", "BadArgument", serverError)
          )
        }))
  }))
