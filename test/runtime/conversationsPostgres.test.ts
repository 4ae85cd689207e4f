import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Layer, Ref, Schedule } from "effect"
import { Conversations } from "../../src/runtime/Conversations.js"
import * as ConversationsLive from "../../src/runtime/cluster/ConversationsLive.js"
import { SqlClient } from "@effect/sql"
import { delivery } from "../support/deliveries.js"
import { startPostgres } from "../support/postgres.js"

// The conversations' journal (kern's Conversation entities over @effect/cluster's SQL storage) on a real PostgreSQL
// server: the same code kern runs over kern.db, with only the SqlClient swapped (issue 34's first step).

describe("conversations on PostgreSQL", () => {
  it.scopedLive("a delivered message reaches its conversation once, and the journal forgets it once received", () =>
    Effect.gen(function*() {
      const pg = yield* startPostgres
      const context = yield* Layer.build(
        ConversationsLive.layer.pipe(Layer.provideMerge(PgClient.layer({ url: pg.url, maxConnections: 4 })))
      )
      const conversations = yield* Effect.provide(Conversations, context)
      const received = yield* Ref.make<ReadonlyArray<string>>([])
      const second = yield* Deferred.make<void>()
      const door = yield* conversations.open((d) =>
        Effect.zipRight(
          Ref.update(received, (all) => [...all, `${d.id}:${d.text}`]),
          d.id === 2 ? Deferred.succeed(second, undefined) : Effect.void
        )
      )
      yield* door.deliver(delivery(1, "first"), "main")
      // Handed over again (a replay after a restart): one message.
      yield* door.deliver(delivery(1, "first"), "main")
      yield* door.deliver(delivery(2, "second"), "telegram-42")
      yield* Deferred.await(second)
      const poll = Schedule.spaced("20 millis")
      yield* Effect.repeat(Ref.get(received), { schedule: poll, until: (all) => all.length >= 2 })
      expect([...(yield* Ref.get(received))].sort()).toEqual(["1:first", "2:second"])

      // The journal's tables are PostgreSQL's now; once received, prune leaves nothing pending.
      const sql = yield* Effect.provide(SqlClient.SqlClient, context)
      yield* Effect.repeat(door.prune.pipe(Effect.zipRight(sql<{ n: string }>`SELECT count(*) AS n FROM cluster_messages`)), {
        schedule: poll,
        until: (rows) => Number(rows[0]?.n) === 0
      })
      // Message 1, handed over twice, was received once.
      expect(yield* Ref.get(received)).toHaveLength(2)
    }), 180_000)
})
