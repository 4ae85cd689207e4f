import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { inject } from "vitest"
import { notCopied } from "../../src/backup/copyRows.js"
import { agentPgMigrations } from "../../src/runtime/agentDatabase.js"
import * as PgDatabase from "../../src/storage/pg/PgDatabase.js"
import { tableColumns } from "../../src/storage/tableColumns.js"
import { FakeReply, makeWith } from "../support/fakeModelServer.js"
import { runKernIn } from "../support/inProcessCli.js"
import { operatorTurn, testRuntime } from "../support/operatorTurn.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

// An agent whose kern.db is on PostgreSQL is backed up with its rows (into an SQLite kern.db in the archive, which
// verify checks) and restored into its schema on the server, identities going on after the restored ids.

const env = { OPENAI_API_KEY: "sk-test" }
const kern = (args: ReadonlyArray<string>) => Effect.promise(() => runKernIn(args, { env }))
const git = (dir: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir, encoding: "utf8" })

/** The agent's schema as kern opens it. */
const onSchema = (url: string, schema: string) =>
  PgDatabase.layer({ url: Redacted.make(url), shown: url, schema, migrations: agentPgMigrations, maxConnections: 1 })

/** Every copied table's rows, in a stable order: what a backup and restore must keep. */
const snapshot = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows: Record<string, unknown> = {}
  for (const [table, columns] of yield* tableColumns(sql)) {
    if (notCopied(table) || table.startsWith("cluster_")) continue
    rows[table] = yield* sql.unsafe(`SELECT * FROM "${table}" ORDER BY ${columns.map((_, i) => i + 1).join(", ")}`)
  }
  return rows
})

describe("kern backup and restore of an agent on PostgreSQL", () => {
  it.live("the schema's rows are in the archive; restore refuses a schema in use and loads a lost one back", () =>
    Effect.scoped(Effect.gen(function*() {
      const url = inject("postgresUrl")
      const schema = `bk_${process.pid}_${Date.now().toString(36)}`
      const server = yield* makeWith({ fallback: FakeReply.text("Noted: the gate code.") })
      const dir = NodePath.join(makeTempDir(), "agent")
      writeFiles(dir, {
        ".kern/config.json": JSON.stringify({ provider: "openai", model: "test-model", baseURL: server.baseURL, database: { url, schema } }),
        ".gitignore": ".kern/\n",
        "IDENTITY.md": "# IDENTITY.md\nI am the test agent.\n"
      })
      git(dir, "init", "-q")
      git(dir, "add", "-A")
      git(dir, "commit", "-qm", "first")
      const turn = yield* operatorTurn("the gate code is zebracorn").pipe(Effect.provide(testRuntime(dir)))
      expect(turn.outcome.failure).toBeUndefined()

      // Rows of the tables whose order of reference a copy must survive: a parent summary made after its children,
      // an artifact's uses, a schedule's runs; and a pruned media file.
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO context_segments (id, session_id, level, start_idx, end_idx, tokens, first_at, last_at, parent_id, created_at_ms)
          VALUES (1, 's', 0, 0, 3, 10, 'a', 'b', 2, 1), (2, 's', 1, 0, 3, 5, 'a', 'b', NULL, 2)`
        yield* sql`INSERT INTO tool_artifacts (artifact_id, sha256, bytes, lines, created_at_ms) VALUES ('art_1', 'x', 3, 1, 1)`
        yield* sql`INSERT INTO tool_artifact_uses (session_id, artifact_id, tool_id, first_seen_at_ms) VALUES ('s', 'art_1', 'bash', 1)`
        yield* sql`INSERT INTO schedules (kind, at_ms, timezone, prompt, misfire, grace_ms, origin_interface, origin_channel,
          origin_user_id, created_by, created_at_ms) VALUES ('at', 1795000000000, 'UTC', 'water the plants', 'once', 60000, 'cli', 'terminal', 'operator', 'operator', 1)`
        yield* sql`INSERT INTO media (media_id, sha256, media_type, bytes, created_at_ms, pruned_at_ms) VALUES ('med_1', 'y', 'image/png', 4, 1, 2)`
      }).pipe(Effect.provide(onSchema(url, schema)), Effect.orDie)
      const before = yield* snapshot.pipe(Effect.provide(onSchema(url, schema)), Effect.orDie)
      expect((before["kernel_events"] as ReadonlyArray<unknown>).length).toBeGreaterThan(0)

      const archive = NodePath.join(makeTempDir(), "agent.tar.gz")
      const made = yield* kern(["backup", dir, "-o", archive])
      expect(made.status, made.stderr).toBe(0)
      expect(made.stderr).toContain(`copied kern.db from schema ${schema} on postgres://`)
      expect(made.stderr).toContain("recall's index is not in it: it is rebuilt from the sessions")
      expect(made.stderr).not.toContain(new URL(url).password || "\u0000never")
      const verified = yield* kern(["backup", "verify", archive])
      expect(verified.status, verified.stderr).toBe(0)

      // The schema is the running agent's: a restore beside it would mix two agents' rows.
      const beside = NodePath.join(makeTempDir(), "beside")
      const refused = yield* kern(["restore", archive, "--dir", beside])
      expect(refused.status).not.toBe(0)
      expect(refused.stderr).toContain(`schema ${schema} on postgres://`)
      expect(refused.stderr).toContain("never mixes two agents' rows")
      expect(NodeFs.existsSync(beside)).toBe(false)

      // The server lost the schema: restored, its rows are back as they were.
      yield* Effect.flatMap(PgClient.PgClient, (sql) => sql`DROP SCHEMA ${sql(schema)} CASCADE`).pipe(
        Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
        Effect.orDie
      )
      const restored = NodePath.join(makeTempDir(), "restored")
      const back = yield* kern(["restore", archive, "--dir", restored])
      expect(back.status, back.stderr).toBe(0)
      expect(back.stdout).toContain(`kern.db's rows (into schema ${schema} on postgres://`)
      expect(NodeFs.existsSync(NodePath.join(restored, ".kern", "kern.db"))).toBe(false)
      const after = yield* Effect.gen(function*() {
        const rows = yield* snapshot
        // Identities go on after the restored ids.
        const sql = yield* SqlClient.SqlClient
        const [next] = yield* sql<{ id: number }>`INSERT INTO schedules (kind, at_ms, timezone, prompt, misfire, grace_ms,
          origin_interface, origin_channel, origin_user_id, created_by, created_at_ms)
          VALUES ('at', 1, 'UTC', 'p', 'once', 1, 'cli', 'terminal', 'operator', 'operator', 1) RETURNING id`
        const [segment] = yield* sql<{ id: number }>`INSERT INTO context_segments (session_id, level, start_idx, end_idx, tokens,
          first_at, last_at, created_at_ms) VALUES ('s', 0, 4, 5, 1, 'a', 'b', 3) RETURNING id`
        return { rows, next: next!.id, segment: segment!.id }
      }).pipe(Effect.provide(onSchema(url, schema)), Effect.orDie)
      expect(after.rows).toEqual(before)
      expect(after.next).toBe(2)
      expect(after.segment).toBe(3)

      // The restored agent answers from its schema, and its recall index is built again from the sessions.
      const reindexed = yield* kern(["recall", "reindex", "--dir", restored])
      expect(reindexed.status, reindexed.stderr).toBe(0)
      const found = yield* kern(["recall", "search", "zebracorn", "--dir", restored, "--json"])
      expect(found.status, found.stderr).toBe(0)
      expect(found.stdout).toContain("zebracorn")
    })), 180_000)
})
