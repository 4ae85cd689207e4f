import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { MediaStore } from "../../src/media/MediaStore.js"
import { Retention } from "../../src/tools/retention/Retention.js"
import { reportLines } from "../../src/tools/retention/RetentionReport.js"
import { agentDatabaseConfig, databases, type TestDatabase } from "../support/databases.js"
import { buildAgentCore, testAgentDir } from "../support/testAgentDir.js"

// `.kern/media` under retention (config retention.media): files no session line and no waiting message refers to go by
// age and size; a file a session refers to stays whatever the limits; a pruned file, asked for, says so and when.

const day = 86_400_000
const sha = (bytes: Uint8Array) => NodeCrypto.createHash("sha256").update(bytes).digest("hex")
const bytesOf = (text: string) => new TextEncoder().encode(text)

const agentWith = (database: TestDatabase, retention: Record<string, unknown>) =>
  Effect.gen(function*() {
    const dir = testAgentDir({ retention: { media: retention }, ...(yield* agentDatabaseConfig(database)) })
    const scope = yield* Effect.scope
    const core = yield* buildAgentCore(dir, scope)
    const retentionContext = yield* Layer.buildWithScope(Retention.Default.pipe(Layer.provide(Layer.succeedContext(core)), Layer.provide(NodeContext.layer)), scope)
    const sql = Context.get(core, SqlClient.SqlClient)
    const media = Context.get(core, MediaStore)
    const retentionService = Context.get(retentionContext, Retention)
    const ingest = (name: string, text: string) => media.ingest({ name, bytes: bytesOf(text) }).pipe(Effect.orDie)
    /** Makes a stored file look stored `days` ago. */
    const storedDaysAgo = (id: string, days: number) =>
      sql`UPDATE media SET created_at_ms = ${Date.now() - days * day} WHERE media_id = ${id}`.pipe(Effect.orDie)
    /** A session line that refers to the files (as a user message's attachments do). */
    const inSession = (ids: ReadonlyArray<string>) =>
      Effect.sync(() => {
        const sessions = NodePath.join(dir, ".kern/sessions")
        NodeFs.mkdirSync(sessions, { recursive: true })
        NodeFs.appendFileSync(
          NodePath.join(sessions, "20260101-000000-000-abcd.jsonl"),
          `${JSON.stringify({ _tag: "user", text: "see", attachments: ids.map((id) => ({ id })), at: "2026-01-01T00:00:00.000Z" })}\n`
        )
      })
    /** A message in the inbox, not yet answered, with the file. */
    const waiting = (id: string) =>
      sql`INSERT INTO inbox (interface, channel, user_id, text, received_at_ms, attachments)
        VALUES ('cli', 'terminal', 'operator', 'x', ${Date.now()}, ${JSON.stringify([{ id }])})`.pipe(Effect.orDie)
    const run = (dryRun = false) => retentionService.run({ dryRun, vacuum: false }).pipe(Effect.orDie)
    const onDisk = (text: string) => NodeFs.existsSync(NodePath.join(dir, ".kern/media", sha(bytesOf(text))))
    return { dir, media, ingest, storedDaysAgo, inSession, waiting, run, onDisk }
  })

describe.each(databases)("retention: media, kern.db on $dialect", (database) => {
  it.scopedLive("by age: an old file no session refers to is pruned (a dry run first says so); an old one a session refers to and a fresh one stay; asked for, the pruned one says when", () =>
    Effect.gen(function*() {
      const agent = yield* agentWith(database, { maxAgeDays: 30, maxBytes: null })
      const kept = yield* agent.ingest("receipt.txt", "a receipt the conversation shows")
      const orphan = yield* agent.ingest("orphan.txt", "a file whose message was refused part-way")
      const fresh = yield* agent.ingest("fresh.txt", "just arrived, its turn not yet run")
      yield* agent.storedDaysAgo(kept.id, 400)
      yield* agent.storedDaysAgo(orphan.id, 40)
      yield* agent.storedDaysAgo(fresh.id, 40)
      yield* agent.inSession([kept.id])
      // Stored 40 days ago, but its message waits in the inbox: referred to as well.
      yield* agent.waiting(fresh.id)
      const dry = yield* agent.run(true)
      expect(dry.media?.pruned).toEqual({ count: 1, bytes: orphan.bytes })
      expect(agent.onDisk("a file whose message was refused part-way")).toBe(true)

      const report = yield* agent.run()
      expect(report.media?.pruned).toEqual({ count: 1, bytes: orphan.bytes })
      expect(report.media?.referenced.count).toBeGreaterThanOrEqual(1)
      expect(reportLines(report).join("\n")).toContain(`media freed: 1 files, ${orphan.bytes} B`)
      expect(agent.onDisk("a file whose message was refused part-way")).toBe(false)
      expect(agent.onDisk("a receipt the conversation shows")).toBe(true)

      const today = new Date().toISOString().slice(0, 10)
      const asked = yield* Effect.flip(agent.media.read(orphan.id))
      expect(asked.message).toBe(`media ${orphan.id} was pruned by retention on ${today}`)
      expect(new TextDecoder().decode(yield* Effect.orDie(agent.media.read(kept.id)))).toBe("a receipt the conversation shows")

      // The same bytes stored again bring it back, as a new file for retention's age.
      yield* agent.ingest("orphan.txt", "a file whose message was refused part-way")
      expect(new TextDecoder().decode(yield* Effect.orDie(agent.media.read(orphan.id)))).toBe("a file whose message was refused part-way")
      expect((yield* agent.run()).media?.pruned.count).toBe(0)
    }))

  it.scopedLive("by size: the oldest files no session refers to go until all fit maxBytes; one a session refers to stays even when it alone is over", () =>
    Effect.gen(function*() {
      const agent = yield* agentWith(database, { maxAgeDays: null, maxBytes: 100 })
      const big = yield* agent.ingest("big.txt", "b".repeat(150))
      const older = yield* agent.ingest("older.txt", "o".repeat(60))
      const newer = yield* agent.ingest("newer.txt", "n".repeat(60))
      yield* agent.storedDaysAgo(big.id, 10)
      yield* agent.storedDaysAgo(older.id, 5)
      yield* agent.storedDaysAgo(newer.id, 2)
      yield* agent.inSession([big.id])
      const report = yield* agent.run()
      // 270 bytes over 100: both unreferenced files go, oldest first; the referenced one is kept.
      expect(report.media?.pruned).toEqual({ count: 2, bytes: 120 })
      expect(report.media?.kept).toEqual({ count: 1, bytes: 150 })
      expect(agent.onDisk("b".repeat(150))).toBe(true)
    }))
})
