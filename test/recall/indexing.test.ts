import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Recall } from "../../src/recall/Recall.js"
import type { SessionLine } from "../../src/session/messages.js"
import {
  answer,
  appendLines,
  callTool,
  header,
  loadedAt,
  makeAgentDir,
  recallLayer,
  sessionPath,
  toolResult,
  user
} from "./harness.js"
import { writeFiles } from "../support/tempDir.js"
import { type RecallDatabase, sqlite } from "./databases.js"
import { postgresServers } from "./servers.js"

const sid = "20260101-100000-000-aaaa"

const count = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ readonly n: number }>`SELECT CAST(count(*) AS integer) AS n FROM ${sql(table)}`).pipe(
    Effect.map((rows) => rows[0]!.n)
  )

const chunkRanges = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ readonly messageStart: number; readonly messageEnd: number; readonly text: string }>`
    SELECT message_start, message_end, text FROM recall_chunks WHERE source = 'session' ORDER BY message_start`)

// Indexing is the same on SQLite and on PostgreSQL (the real server: keywords; vectors are search.test.ts's).
const servers = postgresServers({ pglite: false, postgres: true })
const databases: ReadonlyArray<RecallDatabase> = [sqlite, servers.postgres]

describe.each(databases)("recall indexing on $name", (database) => {
  it.live("reads only appended bytes, waits for a torn line and for an unfinished turn, chunks a straddling turn once", () =>
    Effect.gen(function*() {
      const dir = makeAgentDir()
      const path = sessionPath(dir, sid)
      appendLines(path, header(sid), user("where is the router backup?"), answer("in notes/router-backup.md"))
      const layer = recallLayer(loadedAt(dir), undefined, database)
      yield* Effect.gen(function*() {
        const recall = yield* Recall
        expect(yield* recall.sync).toBe(2)
        expect(yield* chunkRanges).toMatchObject([{ messageStart: 0, messageEnd: 1 }])
        // Nothing new: nothing read.
        expect(yield* recall.sync).toBe(0)

        // A turn that straddles two passes: its question and tool call now, a torn half line after them.
        appendLines(path, user("what does the firewall block?"), callTool("c1", "read", { path: "fw.md" }))
        NodeFs.appendFileSync(path, '{"_tag":"tool","toolCallId":"c1","toolNa')
        expect(yield* recall.sync).toBe(2)
        expect(yield* count("recall_messages")).toBe(4)
        // The turn is not finished: no chunk for it yet.
        expect((yield* chunkRanges).length).toBe(1)

        // The torn line completes, and the answer comes.
        NodeFs.appendFileSync(path, 'me":"read","isError":false,"result":"port 22 closed","at":"2026-01-01T10:00:02.000Z"}\n')
        appendLines(path, answer("it blocks inbound ssh"))
        expect(yield* recall.sync).toBe(2)
        const ranges = yield* chunkRanges
        expect(ranges.map((r) => [r.messageStart, r.messageEnd])).toEqual([[0, 1], [2, 5]])
        expect(ranges[1]!.text).toContain("port 22 closed")
        expect(ranges[1]!.text).toContain("what does the firewall block?")
      }).pipe(Effect.provide(layer))
    }))

  it.live("a truncated or replaced file is indexed again from the start; a deleted one is forgotten", () =>
    Effect.gen(function*() {
      const dir = makeAgentDir()
      const path = sessionPath(dir, sid)
      appendLines(path, header(sid), user("alpha question"), answer("alpha answer"), user("beta question"), answer("beta answer"))
      yield* Effect.gen(function*() {
        const recall = yield* Recall
        expect(yield* recall.sync).toBe(4)
        // Rewritten shorter: what was read before is gone.
        NodeFs.writeFileSync(path, "")
        appendLines(path, header(sid), user("gamma question"), answer("gamma answer"))
        expect(yield* recall.sync).toBe(2)
        expect(yield* count("recall_messages")).toBe(2)
        const hits = yield* recall.search({ query: "alpha" })
        expect(hits.hits).toEqual([])
        expect((yield* recall.search({ query: "gamma" })).hits).toHaveLength(1)

        // Replaced by another file of at least the same size (a new inode): read again too.
        const other = `${path}.new`
        appendLines(other, header(sid), user("delta question, a much longer one than before"), answer("delta answer"))
        NodeFs.renameSync(other, path)
        expect(yield* recall.sync).toBe(2)
        expect((yield* recall.search({ query: "gamma" })).hits).toEqual([])
        expect((yield* recall.search({ query: "delta" })).hits).toHaveLength(1)

        NodeFs.rmSync(path)
        yield* recall.sync
        expect(yield* count("recall_messages")).toBe(0)
        expect(yield* count("recall_chunks")).toBe(0)
      }).pipe(Effect.provide(recallLayer(loadedAt(dir), undefined, database)))
    }))

  it.live("a new session is picked up; long turns split at message boundaries; tool output is cut in chunks only", () =>
    Effect.gen(function*() {
      const dir = makeAgentDir()
      const big = "x".repeat(5_000)
      appendLines(sessionPath(dir, sid), header(sid), user("hello"), answer("hi"))
      yield* Effect.gen(function*() {
        const recall = yield* Recall
        yield* recall.sync
        const second = "20260102-100000-000-bbbb"
        const words = Array.from({ length: 700 }, (_, i) => `word${i}`).join(" ")
        appendLines(
          sessionPath(dir, second),
          header(second),
          user(`first ${words}`),
          callTool("c1", "bash", { command: "cat big" }),
          toolResult("c1", "bash", big),
          answer(`second ${words}`),
          answer(`third ${words}`)
        )
        expect(yield* recall.sync).toBe(5)
        const stats = yield* recall.stats
        expect(stats.sessions).toBe(2)
        const rows = yield* chunkRanges
        const ofSecond = rows.filter((r) => r.text.includes("word1 "))
        // 3 × ~1,400 tokens do not fit in one 2,000-token chunk: cut between messages, never inside one.
        expect(ofSecond.length).toBeGreaterThan(1)
        for (const row of ofSecond) expect(row.text.startsWith("user:") || row.text.startsWith("assistant:")).toBe(true)
        const tool = rows.find((r) => r.text.includes("tool bash"))!
        expect(tool.text).toContain("[3000 more characters]")
        // The message itself is stored whole, for load mode.
        const loaded = yield* recall.load({ sessionId: second, messageStart: 2, messageEnd: 2 })
        expect(loaded.messages[0]!.text).toBe(big)
      }).pipe(Effect.provide(recallLayer(loadedAt(dir), undefined, database)))
    }))

  it.live("knowledge/ and notes/ files are indexed with their path, again when their content changes, and forgotten when removed", () =>
    Effect.gen(function*() {
      const dir = makeAgentDir()
      writeFiles(dir, {
        "knowledge/boat.md": "# Boat\n\nThe sailboat is moored at pier 7.",
        "notes/2026-01-05.md": "Called the plumber about the boiler.",
        "notes/not-markdown.txt": "the sailboat is a red herring here"
      })
      const fileChunks = Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ readonly id: number; readonly path: string; readonly text: string }>`
          SELECT id, path, text FROM recall_chunks WHERE source = 'file' ORDER BY path, id`)
      yield* Effect.gen(function*() {
        const recall = yield* Recall
        yield* recall.sync
        const first = yield* fileChunks
        expect(first.map((c) => c.path)).toEqual(["knowledge/boat.md", "notes/2026-01-05.md"])
        const hit = (yield* recall.search({ query: "sailboat pier" })).hits[0]!
        expect(hit).toMatchObject({ source: "file", path: "knowledge/boat.md", sessionId: null })
        expect(hit.text.startsWith("knowledge/boat.md\n")).toBe(true)

        // Unchanged files are not chunked again (same rows); a changed one is, and its old text is no longer found.
        NodeFs.writeFileSync(NodePath.join(dir, "knowledge", "boat.md"), "# Boat\n\nThe sailboat moved to the harbour in Kiel.")
        yield* recall.sync
        const second = yield* fileChunks
        const notes = (rows: typeof first) => rows.filter((c) => c.path.startsWith("notes/")).map((c) => c.id)
        expect(notes(second)).toEqual(notes(first))
        expect(second.find((c) => c.path === "knowledge/boat.md")!.text).toContain("harbour in Kiel")
        expect((yield* recall.search({ query: "pier" })).hits).toEqual([])
        expect((yield* recall.search({ query: "harbour" })).hits[0]!.path).toBe("knowledge/boat.md")

        NodeFs.rmSync(NodePath.join(dir, "knowledge", "boat.md"))
        yield* recall.sync
        expect((yield* fileChunks).map((c) => c.path)).toEqual(["notes/2026-01-05.md"])
        expect((yield* recall.stats).files).toBe(1)
      }).pipe(Effect.provide(recallLayer(loadedAt(dir), undefined, database)))
    }))

  it.live("a session indexed a few lines at a pass gives the chunks and the hits of one pass over it", () =>
    Effect.gen(function*() {
      // Turns of every shape chunking meets: short ones, one of 60+ messages (past a page of 50), a long tool
      // output, a turn cut off by the next question, and passes that end inside a turn or inside a page.
      const lines: Array<SessionLine> = []
      for (let t = 0; t < 40; t++) {
        lines.push(user(`question ${t} about topic${t % 7}`))
        const calls = t % 9 === 4 ? 32 : t % 3
        for (let c = 0; c < calls; c++) {
          lines.push(callTool(`c${t}-${c}`, "read", { path: `notes/${t}-${c}.md` }))
          lines.push(toolResult(`c${t}-${c}`, "read", c === 1 ? `output ${t} `.repeat(400) : `result ${t}.${c} topic${c % 7}`))
        }
        if (t % 11 !== 10) lines.push(answer(`answer ${t}: topic${t % 7} settled`))
      }
      lines.push(user("last question"), answer("last answer"))
      const whole = makeAgentDir()
      appendLines(sessionPath(whole, sid), header(sid), ...lines)
      const inPieces = makeAgentDir()
      appendLines(sessionPath(inPieces, sid), header(sid))
      const indexed = (dir: string, passes: Effect.Effect<void, unknown, Recall>) =>
        Effect.gen(function*() {
          yield* passes
          const recall = yield* Recall
          const hits = []
          for (const query of ["topic3", "output", "question settled", "last"]) {
            const found = (yield* recall.search({ query, limit: 50 })).hits
            // A hit is found by its own text (a word of the query): each keyword row is its chunk's.
            for (const hit of found) expect(query.split(" ").some((word) => hit.text.toLowerCase().includes(word))).toBe(true)
            hits.push(found.map((hit) => [hit.messageStart, hit.messageEnd, hit.text]))
          }
          return { chunks: yield* chunkRanges, hits }
        }).pipe(Effect.provide(recallLayer(loadedAt(dir), undefined, database)))
      const once = yield* indexed(whole, Effect.asVoid(Effect.flatMap(Recall, (recall) => recall.sync)))
      const piecewise = yield* indexed(
        inPieces,
        Effect.gen(function*() {
          const recall = yield* Recall
          for (let at = 0, step = 1; at < lines.length; at += step, step = (step * 7 + 3) % 53 + 1) {
            appendLines(sessionPath(inPieces, sid), ...lines.slice(at, at + step))
            yield* recall.sync
          }
        })
      )
      expect(once.chunks.length).toBeGreaterThan(40)
      expect(piecewise.chunks).toEqual(once.chunks)
      expect(piecewise.hits).toEqual(once.hits)
    }))
})
