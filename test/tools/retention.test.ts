import { assert, describe, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, TestClock } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { AgentConfig } from "../../src/config/AgentConfig.js"
import { ArtifactStore } from "../../src/tools/ArtifactStore.js"
import { ContextStats } from "../../src/tools/ContextStats.js"
import { Retention } from "../../src/tools/retention/Retention.js"
import { retrieveToolOutput } from "../../src/tools/retrieveToolOutput.js"
import { usageTotals } from "../../src/session/usageTotals.js"
import { spendDay, spendZone } from "../../src/model/spendCaps.js"
import { inRun } from "../kernel/harness.js"
import { loadedAt } from "../recall/harness.js"
import { seedSpend } from "../support/spendRows.js"
import { agentDatabases, type TestDatabase } from "../support/databases.js"
import { makeWorkspace, toolsLayer } from "./support.js"

const day = 86_400_000
const hour = 3_600_000
/** A fixed start (2026-03-10 12:00 UTC): the tests move the TestClock from here. */
const t0 = Date.UTC(2026, 2, 10, 12)

const layerOn = (database: TestDatabase) => (root: string, retention: Record<string, unknown>) =>
  Retention.Default.pipe(
    Layer.provideMerge(toolsLayer(root, {}, { database: database.layer })),
    Layer.provideMerge(Layer.succeed(AgentConfig, loadedAt(root, { retention, timezone: "UTC" }))),
    Layer.orDie
  )

const artifactsDir = (root: string) => NodePath.join(root, ".kern", "artifacts")
const fileOf = (root: string, id: string) => {
  const files = NodeFs.readdirSync(artifactsDir(root)).filter((name) => name.startsWith(id.slice(4)))
  return files[0] === undefined ? undefined : NodePath.join(artifactsDir(root), files[0])
}
/** Makes a file look written `ms` before the TestClock's now (the sweep judges files by their mtime). */
const age = (file: string, atMs: number) => NodeFs.utimesSync(file, atMs / 1000, atMs / 1000)

const output = (tag: string, kib: number) => `${tag}\n${"x".repeat(1023)}\n`.repeat(kib)

const put = (sessionId: string, text: string) =>
  Effect.flatMap(ArtifactStore, (store) => store.put({ sessionId, toolId: "bash", text })).pipe(Effect.orDie)

const gc = (dryRun = false) => Effect.flatMap(Retention, (retention) => retention.run({ dryRun, vacuum: false })).pipe(Effect.orDie)

const scalar = (query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ v: number | null }>(query)).pipe(
    Effect.map((rows) => rows[0]?.v ?? null),
    Effect.orDie
  )

// Every test runs on both databases kern.db can be on (SQLite, and an agent's schema on PostgreSQL).
describe.each(agentDatabases)("retention on $dialect", (database) => {
  const layerFor = layerOn(database)

  describe("retention: artifacts", () => {
    it.effect("by age: one unused past maxAgeDays is pruned (file gone, row kept as pruned); retrieving it says so", () =>
      Effect.gen(function*() {
        const root = (yield* AgentConfig).paths.dir
        yield* TestClock.setTime(t0)
        const old = yield* put("s1", output("old", 16))
        yield* TestClock.setTime(t0 + 20 * day)
        const fresh = yield* put("s1", output("fresh", 16))
        age(fileOf(root, old.artifactId)!, t0)
        yield* TestClock.setTime(t0 + 35 * day)
        const report = yield* gc()
        assert.strictEqual(report.artifacts.pruned.count, 1)
        assert.strictEqual(report.artifacts.pruned.bytes, old.bytes)
        assert.strictEqual(report.artifacts.kept.count, 1)
        assert.isUndefined(fileOf(root, old.artifactId))
        assert.isDefined(fileOf(root, fresh.artifactId))
        const failure = yield* Effect.flip(inRun(retrieveToolOutput({ artifactId: old.artifactId, offset: 1, limit: 5 })))
        assert.strictEqual(failure.code, "NOT_FOUND")
        assert.include(failure.message, `artifact ${old.artifactId} was pruned by retention on 2026-04-14`)
        const page = yield* inRun(retrieveToolOutput({ artifactId: fresh.artifactId, offset: 1, limit: 1 }))
        assert.include(page.text, "fresh")
        // Produced again, it is back: file written, row live.
        yield* put("s2", output("old", 16))
        const again = yield* inRun(retrieveToolOutput({ artifactId: old.artifactId, offset: 1, limit: 1 }))
        assert.include(again.text, "old")
      }).pipe(Effect.provide(layerFor(makeWorkspace(), { artifacts: { maxAgeDays: 30, maxBytes: null } }))))

    it.effect("by size: the least recently used go until the rest fits; a use refreshes; one used within the hour stays", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(t0)
        const a = yield* put("s1", output("a", 16))
        yield* TestClock.setTime(t0 + day)
        const b = yield* put("s1", output("b", 16))
        yield* TestClock.setTime(t0 + 2 * day)
        const c = yield* put("s1", output("c", 16))
        yield* TestClock.setTime(t0 + 3 * day)
        yield* put("s2", output("a", 16)) // a used again: now the most recent of the three
        yield* TestClock.setTime(t0 + 3 * day + 2 * hour)
        const recent = yield* put("s3", output("d", 64)) // alone over the limit, but used within the hour
        const report = yield* gc()
        const root = (yield* AgentConfig).paths.dir
        assert.deepStrictEqual(
          [a, b, c, recent].map((artifact) => fileOf(root, artifact.artifactId) !== undefined),
          [false, false, false, true]
        )
        assert.strictEqual(report.artifacts.pruned.count, 3)
        assert.strictEqual(report.artifacts.kept.bytes, recent.bytes)
        // Once the hour is past, it goes too.
        yield* TestClock.adjust(2 * hour)
        const later = yield* gc()
        assert.strictEqual(later.artifacts.pruned.count, 1)
      }).pipe(Effect.provide(layerFor(makeWorkspace(), { artifacts: { maxAgeDays: null, maxBytes: 40 * 1024 } }))))

    it.effect("a dry run says what it would free and changes nothing; the real run then frees exactly that", () =>
      Effect.gen(function*() {
        const root = (yield* AgentConfig).paths.dir
        yield* TestClock.setTime(t0)
        const old = yield* put("s1", output("old", 8))
        yield* TestClock.setTime(t0 + 100 * day)
        const dry = yield* gc(true)
        assert.isTrue(dry.dryRun)
        assert.strictEqual(dry.artifacts.pruned.count, 1)
        assert.isDefined(fileOf(root, old.artifactId))
        assert.strictEqual(yield* scalar("SELECT count(*) AS v FROM tool_artifacts WHERE pruned_at_ms IS NOT NULL"), 0)
        assert.strictEqual(yield* scalar("SELECT count(*) AS v FROM retention_state"), 0)
        const real = yield* gc()
        assert.deepStrictEqual(real.artifacts.pruned, dry.artifacts.pruned)
        assert.isUndefined(fileOf(root, old.artifactId))
      }).pipe(Effect.provide(layerFor(makeWorkspace(), {}))))

    it.effect("what a crash mid-gc or mid-put leaves is repaired by the next run", () =>
      Effect.gen(function*() {
        const root = (yield* AgentConfig).paths.dir
        const sql = yield* SqlClient.SqlClient
        yield* TestClock.setTime(t0)
        const prunedButOnDisk = yield* put("s1", output("p", 4))
        const rowWithoutFile = yield* put("s1", output("r", 4))
        // A prune that marked its row and died before removing the file; a file whose row was never written.
        yield* sql`UPDATE tool_artifacts SET pruned_at_ms = ${t0} WHERE artifact_id = ${prunedButOnDisk.artifactId}`
        NodeFs.rmSync(fileOf(root, rowWithoutFile.artifactId)!)
        const orphan = NodePath.join(artifactsDir(root), `${"e".repeat(64)}.txt`)
        NodeFs.writeFileSync(orphan, "orphan")
        const justWritten = NodePath.join(artifactsDir(root), `${"f".repeat(64)}.txt`)
        NodeFs.writeFileSync(justWritten, "being put")
        for (const file of [orphan, fileOf(root, prunedButOnDisk.artifactId)!]) age(file, t0 - 2 * hour)
        age(justWritten, t0)
        const report = yield* gc()
        assert.strictEqual(report.artifacts.stray.count, 2)
        assert.strictEqual(report.artifacts.missing, 1)
        assert.isFalse(NodeFs.existsSync(orphan))
        assert.isTrue(NodeFs.existsSync(justWritten))
        assert.isUndefined(fileOf(root, prunedButOnDisk.artifactId))
        const failure = yield* Effect.flip(inRun(retrieveToolOutput({ artifactId: rowWithoutFile.artifactId, offset: 1, limit: 1 })))
        assert.include(failure.message, "pruned by retention")
      }).pipe(Effect.provide(layerFor(makeWorkspace(), {}))))
  })

  /** Events as the kernel records them; a finished turn carries its usage in `detail`. */
  const seedEvents = (count: number, atMs: (i: number) => number, detail: (i: number) => string | null = () => null) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) => {
        const text = detail(i)
        return sql`INSERT INTO kernel_events (ts_ms, decision_key, run_id, trace_id, session_id, tool_id, status, detail)
          VALUES (${atMs(i)}, ${text === null ? "kernel.tool.call" : "kernel.run.finished"}, ${`run-${i}`}, ${`trace-${i}`},
            's1', 'bash', 'ok', ${text})`
      }, { discard: true })).pipe(Effect.orDie)

  const turnDetail = JSON.stringify({ kind: "turn", usage: { inputTokens: 100, outputTokens: 10, costUsdCents: 0.5 } })

  describe("retention: the event log", () => {
    it.effect("by age: events older than maxAgeDays go, in batches; the usage of pruned turns is carried", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(t0 + 100 * day)
        // 5,000 old events (over two batches), every tenth a finished turn; 10 recent ones.
        yield* seedEvents(5_000, (i) => t0 + i, (i) => (i % 10 === 0 ? turnDetail : null))
        yield* seedEvents(10, (i) => t0 + 95 * day + i)
        const before = yield* usageTotals.pipe(Effect.orDie)
        const report = yield* gc()
        assert.strictEqual(report.events.pruned.count, 5_000)
        assert.strictEqual(report.events.kept.count, 10)
        assert.strictEqual(yield* scalar("SELECT count(*) AS v FROM kernel_events"), 10)
        const after = yield* usageTotals.pipe(Effect.orDie)
        assert.deepStrictEqual(after, before)
        assert.strictEqual(after.turns, 500)
        assert.strictEqual(after.inputTokens, 50_000)
      }).pipe(Effect.provide(layerFor(makeWorkspace(), { events: { maxAgeDays: 90 } }))))

    it.effect("by size: the oldest go until the log fits maxBytes; a dry run reads the same and deletes nothing", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(t0)
        yield* seedEvents(3_000, (i) => t0 - 3_000 + i, () => JSON.stringify({ pad: "p".repeat(200) }))
        const dry = yield* gc(true)
        assert.strictEqual(yield* scalar("SELECT count(*) AS v FROM kernel_events"), 3_000)
        const total = dry.events.pruned.bytes + dry.events.kept.bytes
        assert.isAtMost(dry.events.kept.bytes, 300_000)
        assert.isAbove(dry.events.kept.bytes, 300_000 - total / 3_000 * 2)
        const report = yield* gc()
        assert.deepStrictEqual(report.events, dry.events)
        const left = yield* scalar("SELECT count(*) AS v FROM kernel_events")
        assert.strictEqual(left, report.events.kept.count)
        // The newest are what is left.
        assert.strictEqual(yield* scalar("SELECT max(ts_ms) AS v FROM kernel_events"), t0 - 1)
        assert.strictEqual(yield* scalar("SELECT min(ts_ms) AS v FROM kernel_events"), t0 - left!)
      }).pipe(Effect.provide(layerFor(makeWorkspace(), { events: { maxAgeDays: null, maxBytes: 300_000 } }))))
  })

  describe("retention: count records", () => {
    it.effect("by age: spend ledger days and idle sessions' context counters go; this month's spend never does", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const stats = yield* ContextStats
        const now = Date.UTC(2026, 4, 20, 12)
        yield* TestClock.setTime(now - 30 * day)
        yield* stats.recordCompaction("idle-session", 5_000, 1_000).pipe(Effect.orDie)
        yield* TestClock.setTime(now)
        yield* stats.recordCompaction("busy-session", 5_000, 1_000).pipe(Effect.orDie)
        const zone = spendZone("UTC")
        const days = [now - 60 * day, now - 40 * day, now - 19 * day, now - 2 * day, now].map((ms) => spendDay(ms, zone))
        for (const d of days) yield* seedSpend(sql, d, [["agent", "", 100, 10, 1], ["user", "operator", 100, 10, 1]])
        const report = yield* gc()
        // maxAgeDays 1: everything before May goes; May's days stay, however old.
        assert.strictEqual(report.counts.spendRows.count, 4)
        const left = yield* sql<{ day: string }>`SELECT DISTINCT day FROM spend_ledger ORDER BY day`.pipe(Effect.orDie)
        assert.deepStrictEqual(left.map((row) => row.day), ["2026-05-01", "2026-05-18", "2026-05-20"].filter((d) => days.includes(d)))
        assert.strictEqual(report.counts.contextRows.count, 1)
        assert.strictEqual((yield* stats.get("idle-session").pipe(Effect.orDie)).compactions, 0)
        assert.strictEqual((yield* stats.get("busy-session").pipe(Effect.orDie)).compactions, 1)
      }).pipe(Effect.provide(layerFor(makeWorkspace(), { counts: { maxAgeDays: 1, maxBytes: null } }))))

    it.effect("by size: the oldest go first across the ledger and the counters, until they fit", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const stats = yield* ContextStats
        const now = Date.UTC(2026, 4, 20, 12)
        const zone = spendZone("UTC")
        yield* seedSpend(sql, spendDay(now - 300 * day, zone), [["agent", "", 1, 1, 1]])
        for (let i = 0; i < 20; i++) {
          yield* TestClock.setTime(now - (200 - i) * day)
          yield* stats.recordDuplicate(`session-${i}`, 100, 10).pipe(Effect.orDie)
        }
        yield* TestClock.setTime(now)
        const dry = yield* gc(true)
        const total = dry.counts.kept.bytes + dry.counts.spendRows.bytes + dry.counts.contextRows.bytes
        assert.isAbove(total, 1_000)
        const report = yield* gc()
        assert.strictEqual(report.counts.spendRows.count, 1)
        assert.isAtMost(report.counts.kept.bytes, 1_000)
        const left = yield* sql<{ sessionId: string }>`SELECT session_id FROM context_stats ORDER BY updated_at_ms`.pipe(Effect.orDie)
        // The newest counters are kept, in one run.
        assert.strictEqual(left.at(-1)?.sessionId, "session-19")
        assert.strictEqual(left.length, report.counts.kept.count)
        assert.strictEqual(left[0]?.sessionId, `session-${20 - left.length}`)
      }).pipe(Effect.provide(layerFor(makeWorkspace(), { counts: { maxAgeDays: null, maxBytes: 1_000 } }))))
  })

  describe("retention: what it never touches", () => {
    it.effect("sessions, session counts, memory files, recall and the spend of today stay, whatever the limits", () =>
      Effect.gen(function*() {
        const root = (yield* AgentConfig).paths.dir
        const sql = yield* SqlClient.SqlClient
        const files = {
          ".kern/sessions/s1.jsonl": "{\"type\":\"session\"}\n",
          ".kern/session-counts/s1.json": "{}",
          "AGENTS.md": "# agent",
          "notes/2020-01-01.md": "an old note",
          "knowledge/topic.md": "knowledge"
        }
        for (const [name, text] of Object.entries(files)) {
          NodeFs.mkdirSync(NodePath.dirname(NodePath.join(root, name)), { recursive: true })
          NodeFs.writeFileSync(NodePath.join(root, name), text)
          age(NodePath.join(root, name), 0)
        }
        yield* sql`INSERT INTO recall_messages (session_id, idx, role, at_ms, tool_calls, text) VALUES ('s1', 0, 'user', 0, 0, 'hello')`
        yield* sql`INSERT INTO durable_memory (key, value, created_at_ms) VALUES ('k', 'v', 0)`
        yield* TestClock.setTime(t0 + 1_000 * day)
        yield* seedSpend(sql, spendDay(t0 + 1_000 * day, spendZone("UTC")), [["agent", "", 1, 1, 1]])
        yield* gc()
        for (const [name, text] of Object.entries(files)) assert.strictEqual(NodeFs.readFileSync(NodePath.join(root, name), "utf8"), text)
        assert.strictEqual(yield* scalar("SELECT count(*) AS v FROM recall_messages"), 1)
        assert.strictEqual(yield* scalar("SELECT count(*) AS v FROM durable_memory"), 1)
        assert.strictEqual(yield* scalar("SELECT count(*) AS v FROM spend_ledger"), 1)
      }).pipe(Effect.provide(layerFor(makeWorkspace(), {
        artifacts: { maxAgeDays: 1, maxBytes: 1 },
        events: { maxAgeDays: 1, maxBytes: 1 },
        counts: { maxAgeDays: 1, maxBytes: 1 }
      }))))
  })
})
