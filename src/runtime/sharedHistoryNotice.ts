import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import { counted } from "../config/counted.js"
import { mainConversation } from "../kernel/Audience.js"
import { SessionStore } from "../session/SessionStore.js"
import type { Addressed } from "./conversationRouting.js"

const noticeKey = "conversations-per-person"

/**
 * Once per agent folder, when conversations are per person: an agent from before them kept every channel's messages in
 * its one session, which stays the operator's conversation; the messages other people sent there stay where they are
 * (nothing is moved or re-attributed), and the log says so, with how many there are. Given once: kern.db's `notices`.
 */
export const noteSharedHistory = (conversationOf: (message: Addressed) => Effect.Effect<string>) =>
  Effect.gen(function*() {
    const { config } = yield* AgentConfig
    if (config.conversations === "shared") return
    const sql = yield* SqlClient.SqlClient
    const given = yield* sql`SELECT 1 AS found FROM notices WHERE key = ${noticeKey}`
    if (given.length > 0) return
    const store = yield* SessionStore
    const mains = (yield* store.list).filter((session) => session.conversation === mainConversation)
    let others = 0
    for (const session of mains) {
      const loaded = yield* Effect.either(store.load(session.id))
      if (loaded._tag === "Left") continue
      for (const message of loaded.right.messages) {
        if (message._tag === "user" && message.envelope !== undefined && (yield* conversationOf(message.envelope)) !== mainConversation) others++
      }
    }
    if (others > 0) {
      yield* Effect.logWarning(
        `kern: conversations are now per person; the operator's conversation keeps ${counted(others, "earlier message")} ` +
          `from other people (sent before), where they stay. New messages from them go to conversations of their own ` +
          `(kern sessions list). Set "conversations": "shared" in .kern/config.json to keep one conversation for everybody.`
      )
    }
    const nowMs = yield* Clock.currentTimeMillis
    yield* sql`INSERT INTO notices (key, given_at_ms) VALUES (${noticeKey}, ${nowMs}) ON CONFLICT (key) DO NOTHING`
  }).pipe(
    Effect.catchAll((error) => Effect.logWarning(`kern: could not look for other people's messages in the operator's conversation: ${"message" in error ? error.message : String(error)}`)),
    Effect.withSpan("kern.runtime.sharedHistoryNotice")
  )
