import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodePath from "node:path"
import type { HistoryResponse, SessionsResponse } from "../../../src/channels/web/api.js"
import { sessionIdIn } from "../../../src/session/conversationIds.js"
import { pairTelegramUsers } from "../../support/pairedUsers.js"
import { writeSessionFixture } from "../../support/sessionFixture.js"
import { makeTempDir } from "../../support/tempDir.js"
import { bearer, request, startServer } from "./harness.js"

// The operator's API lists every conversation's sessions with whom and where each conversation is, and opens any of
// them: a paired user's session is the operator's to read, as the operator's own is.

const friend = sessionIdIn("20261126-090000-000-bbbb", "telegram-555")
const group = sessionIdIn("20261126-080000-000-cccc", "telegram--1001234")
const operator = sessionIdIn("20261126-100000-000-aaaa", "main")

/** An agent folder with the three sessions and Alice paired on Telegram (555), before the agent starts. */
const folder = Effect.promise(async () => {
  const dir = NodePath.join(makeTempDir(), "agent")
  writeSessionFixture(dir, 6, group)
  writeSessionFixture(dir, 4, friend)
  writeSessionFixture(dir, 8, operator)
  await pairTelegramUsers(dir, [{ userId: "555", displayName: "Alice" }])
  return dir
})

describe("GET /sessions: every conversation, with its person and channel", () => {
  it.live("lists the operator's, Alice's and a group's sessions with whom and where, and opens Alice's", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = yield* folder
      const { base } = yield* startServer({ dir })
      const listed = (yield* request(`${base}/sessions`, { headers: bearer })).json as SessionsResponse
      expect(listed.sessions.map(({ id, conversation, person, channel, messages }) => ({ id, conversation, person, channel, messages })))
        .toEqual([
          { id: group, conversation: "telegram--1001234", person: null, channel: "telegram group -1001234", messages: 6 },
          { id: friend, conversation: "telegram-555", person: { userId: "telegram:555", name: "Alice" }, channel: "telegram DM", messages: 4 },
          { id: operator, conversation: "main", person: { userId: "operator", name: "operator" }, channel: "main", messages: 8 }
        ])

      // Alice's session opens for the operator: its activity and its messages.
      const activity = yield* request(`${base}/sessions/${friend}/activity`, { headers: bearer })
      expect(activity.status).toBe(200)
      expect(activity.json).toMatchObject({ sessionId: friend, total: 4 })
      const history = yield* request(`${base}/history?session=${friend}&limit=10`, { headers: bearer })
      expect(history.status).toBe(200)
      const page = history.json as HistoryResponse
      expect(page).toMatchObject({ sessionId: friend, total: 4 })
      expect(page.messages.map((m) => m.index)).toEqual([0, 1, 2, 3])
    })))
})
