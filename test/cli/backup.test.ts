import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { execFileSync, spawn } from "node:child_process"
import { createRequire } from "node:module"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { gunzipSync } from "node:zlib"
import { valuesOf } from "../../src/kernel/eventRows.js"
import { Recall } from "../../src/recall/Recall.js"
import * as Database from "../../src/storage/Database.js"
import { FakeReply, makeWith, type RecordedRequest } from "../support/fakeModelServer.js"
import { runKernIn } from "../support/inProcessCli.js"
import { operatorTurn, testRuntime } from "../support/operatorTurn.js"
import { writeSessionFixture } from "../support/sessionFixture.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { stdoutShows } from "../support/cli.js"

/**
 * A writer standing in for a busy agent: transactions of two rows that cancel out (a sum that stays 0 in any
 * consistent copy) in kern.db, and session lines appended in two writes each (a torn line at almost any moment).
 */
const writerScript = `
const Database = require(process.argv[1])
const fs = require("node:fs")
const db = new Database(process.argv[2])
db.pragma("journal_mode = WAL")
db.exec("CREATE TABLE IF NOT EXISTS pairs (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)")
const insert = db.prepare("INSERT INTO pairs (v) VALUES (?)")
const pair = db.transaction((i) => { insert.run(i); insert.run(-i) })
let i = 1
const step = () => {
  for (let n = 0; n < 50; n++, i++) {
    pair(i)
    const line = JSON.stringify({ _tag: "user", text: "line " + i, at: "2026-11-27T00:00:00.000Z" }) + "\\n"
    fs.appendFileSync(process.argv[3], line.slice(0, 10))
    fs.appendFileSync(process.argv[3], line.slice(10))
  }
  if (i === 51) process.stdout.write("ready\\n")
  setImmediate(step)
}
step()
`

const env = { OPENAI_API_KEY: "sk-test" }
const kern = (args: ReadonlyArray<string>) => Effect.promise(() => runKernIn(args, { env }))

const git = (dir: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir, encoding: "utf8" })

/** The request of the turn that carries `text` (a turn's request offers tools; a summary's does not). */
const turnRequest = (requests: ReadonlyArray<RecordedRequest>, text: string) =>
  requests.filter((r) => r.path === "/responses" && (r.body as { tools?: unknown }).tools !== undefined && JSON.stringify(r.body).includes(text)).at(-1)

/** A Responses request's items after the system prompt (which names the time and the folder). */
const conversationOf = (request: RecordedRequest | undefined) => {
  const [system, ...rest] = (request?.body as { input: ReadonlyArray<{ content?: unknown }> }).input
  const summary = /<conversation_summary>[\s\S]*<\/conversation_summary>/.exec(JSON.stringify(system?.content))?.[0]
  // The message's own envelope names the moment it was sent.
  return { summary, rest: JSON.parse(JSON.stringify(rest).replace(/time: [^\]]*\]/g, "time: T]")) as unknown }
}

/** An agent folder with memory history in git, a long conversation (an old exchange about a key, then 600 messages). */
const agentWithHistory = (baseURL: string) => {
  const dir = NodePath.join(makeTempDir(), "agent")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({
      provider: "openai",
      model: "test-model",
      baseURL,
      embeddingModel: "test-embedding",
      maxContextTokens: 8_000,
      autoRecall: true
    }),
    ".gitignore": ".kern/\n",
    "IDENTITY.md": "# IDENTITY.md\nI am the test agent.\n"
  })
  git(dir, "init", "-q")
  git(dir, "add", "-A")
  git(dir, "commit", "-qm", "first")
  NodeFs.writeFileSync(NodePath.join(dir, "KNOWLEDGE.md"), "# Knowledge\nThe boat is at pier 7.\n")
  git(dir, "add", "-A")
  git(dir, "commit", "-qm", "second")
  const path = writeSessionFixture(dir, 600)
  const [header, ...rest] = NodeFs.readFileSync(path, "utf8").split("\n")
  const old = [
    { _tag: "user", text: "remember: the spare key is under the blue flowerpot by the shed", at: "2026-11-01T10:00:00.000Z" },
    { _tag: "assistant", text: "Noted: spare key, blue flowerpot, by the shed.", toolCalls: [], at: "2026-11-01T10:00:01.000Z" }
  ].map((line) => JSON.stringify(line))
  NodeFs.writeFileSync(path, [header, ...old, ...rest].join("\n"))
  return dir
}

describe("kern backup, backup verify, restore", () => {
  it.live("round trip: the restored agent has the history, recalls, and continues with the same context window and summaries", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeWith({ fallback: FakeReply.text("We went over the router settings again.") })
      yield* server.embeddings({ bagOfWords: { dimensions: 256 } })
      const dir = agentWithHistory(server.baseURL)
      // As a long-running agent leaves it: indexed, a turn answered, its summaries made.
      const first = yield* Effect.gen(function*() {
        yield* Effect.flatMap(Recall, (recall) => recall.backfill)
        return yield* operatorTurn("what changed on the router?")
      }).pipe(Effect.provide(testRuntime(dir)))
      expect(first.outcome.failure).toBeUndefined()

      // A file that came with a message, as the media store keeps it (named by its sha256).
      const photo = NodePath.join(dir, ".kern", "media", "ab".repeat(32))
      NodeFs.mkdirSync(NodePath.dirname(photo), { recursive: true })
      NodeFs.writeFileSync(photo, "photo bytes", { mode: 0o600 })

      const archive = NodePath.join(makeTempDir(), "agent.tar.gz")
      const made = yield* kern(["backup", dir, "-o", archive])
      expect(made.status, made.stderr).toBe(0)
      expect(made.stderr).toContain("copied kern.db")
      expect(made.stdout).toContain("the memory repository (2 commits), 1 session")
      expect(NodeFs.statSync(archive).mode & 0o777).toBe(0o600)
      expect(NodeFs.readdirSync(NodePath.dirname(archive))).toEqual(["agent.tar.gz"])

      const verified = yield* kern(["backup", "verify", archive])
      expect(verified.status, verified.stderr).toBe(0)
      expect(verified.stdout).toMatch(/^ok: .*match the manifest, the memory bundle verifies \(1 ref\), kern.db passes/)

      const restored = NodePath.join(makeTempDir(), "restored")
      const back = yield* kern(["restore", archive, "--dir", restored])
      expect(back.status, back.stderr).toBe(0)
      expect(back.stdout).toContain("the backup holds no secrets")
      expect(git(restored, "log", "--format=%s")).toBe("second\nfirst\n")
      expect(git(restored, "status", "--porcelain")).toBe("")
      expect(NodeFs.readFileSync(NodePath.join(restored, "KNOWLEDGE.md"), "utf8")).toContain("pier 7")
      const restoredPhoto = NodePath.join(restored, ".kern", "media", "ab".repeat(32))
      expect(NodeFs.readFileSync(restoredPhoto, "utf8")).toBe("photo bytes")
      expect(NodeFs.statSync(restoredPhoto).mode & 0o777).toBe(0o600)

      // The restored index keeps what it read of each session (the restored files are new inodes): nothing is read,
      // chunked or embedded again.
      const indexed = (at: string) => {
        const db = new (createRequire(import.meta.url)("better-sqlite3") as new (file: string) => {
          prepare: (sql: string) => { all: () => Array<{ session_id: string; dev: string; ino: string; offset: number; messages: number }> }
          close: () => void
        })(NodePath.join(at, ".kern", "kern.db"))
        const rows = db.prepare("SELECT * FROM recall_sessions").all()
        db.close()
        return rows
      }
      const [kept] = indexed(restored)
      const restoredSession = NodeFs.statSync(NodePath.join(restored, ".kern", "sessions", `${kept!.session_id}.jsonl`))
      expect({ dev: kept!.dev, ino: kept!.ino }).toEqual({ dev: String(restoredSession.dev), ino: String(restoredSession.ino) })
      expect(indexed(restored).map((row) => [row.session_id, row.offset, row.messages])).toEqual(indexed(dir).map((row) => [row.session_id, row.offset, row.messages]))
      // The doctor finds the restored index where the original is (the turn after the backfill not indexed yet).
      const recallOf = (at: string) =>
        Effect.map(kern(["doctor", at, "--json"]), (result) =>
          (JSON.parse(result.stdout) as { checks: ReadonlyArray<{ check: string; summary: string }> }).checks.find((check) => check.check === "recall"))
      const original = yield* recallOf(dir)
      expect(original?.summary).toContain("2 messages in 1 session not yet indexed")
      expect(yield* recallOf(restored)).toEqual(original)

      // The same next request, summaries and cut included.
      const shown = (at: string) => Effect.map(kern(["context", "show", "--json", "--dir", at]), (result) => {
        expect(result.status, result.stderr).toBe(0)
        const json = JSON.parse(result.stdout) as { cut: number; messages: number; injected: unknown; tokens: { raw: number } }
        return { cut: json.cut, messages: json.messages, injected: json.injected, raw: json.tokens.raw }
      })
      const originalContext = yield* shown(dir)
      expect(originalContext.injected).not.toEqual([])
      expect(yield* shown(restored)).toEqual(originalContext)

      // Recall answers from the restored index.
      const search = yield* kern(["recall", "search", "spare key flowerpot", "--json", "--dir", restored])
      expect(search.status, search.stderr).toBe(0)
      expect(search.stdout).toContain("blue flowerpot")

      // The conversation goes on: the same request in both, the summary and the recalled exchange in it.
      const question = "where is the spare key, under which flowerpot?"
      const again = yield* operatorTurn(question).pipe(Effect.provide(testRuntime(restored)))
      expect(again.outcome.failure).toBeUndefined()
      const fromRestored = conversationOf(turnRequest(yield* server.requests, question))
      expect(fromRestored.summary).toBeDefined()
      expect(JSON.stringify(fromRestored.rest)).toContain("blue flowerpot")
      yield* operatorTurn(question).pipe(Effect.provide(testRuntime(dir)))
      const fromOriginal = conversationOf(turnRequest(yield* server.requests, question))
      expect(fromRestored).toEqual(fromOriginal)
    })), 120_000)

  it.live("a backup taken while kern.db and a session are written is consistent: every transaction whole, every session line complete", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = NodePath.join(makeTempDir(), "agent")
      writeFiles(dir, { ".kern/config.json": JSON.stringify({ provider: "openai", model: "test-model" }), "AGENTS.md": "# agent\n", ".gitignore": ".kern/\n" })
      git(dir, "init", "-q")
      git(dir, "add", "-A")
      git(dir, "commit", "-qm", "first")
      const session = NodePath.join(dir, ".kern", "sessions", "20261127-000000-000-beef.jsonl")
      NodeFs.mkdirSync(NodePath.dirname(session))
      const sqlite = createRequire(import.meta.url).resolve("better-sqlite3")
      const writer = yield* Effect.acquireRelease(
        Effect.sync(() => spawn(process.execPath, ["-e", writerScript, sqlite, NodePath.join(dir, ".kern", "kern.db"), session], { stdio: ["ignore", "pipe", "inherit"] })),
        (child) => Effect.sync(() => child.kill("SIGKILL"))
      )
      yield* Effect.promise(() => stdoutShows(writer, "ready"))
      const archive = NodePath.join(makeTempDir(), "busy.tar.gz")
      const made = yield* kern(["backup", dir, "-o", archive])
      expect(made.status, made.stderr).toBe(0)
      const restored = NodePath.join(makeTempDir(), "restored")
      const back = yield* kern(["restore", archive, "--dir", restored])
      expect(back.status, back.stderr).toBe(0)
      const copy = new (createRequire(import.meta.url)("better-sqlite3") as new (file: string) => {
        prepare: (sql: string) => { get: () => Record<string, number> }
        close: () => void
      })(NodePath.join(restored, ".kern", "kern.db"))
      const totals = copy.prepare("SELECT count(*) AS rows, sum(v) AS total FROM pairs").get()
      copy.close()
      expect(totals["rows"]).toBeGreaterThan(0)
      expect(totals["rows"]! % 2).toBe(0)
      expect(totals["total"]).toBe(0)
      const text = NodeFs.readFileSync(NodePath.join(restored, ".kern", "sessions", NodePath.basename(session)), "utf8")
      expect(text.endsWith("\n")).toBe(true)
      const lines = text.split("\n").slice(0, -1)
      expect(lines.length).toBeGreaterThanOrEqual(50)
      expect(lines.every((line) => typeof JSON.parse(line) === "object")).toBe(true)
    })))

  it.live("audit events still in journals (a killed process's, never replayed) are moved into kern.db and are in the backup", () =>
    Effect.gen(function*() {
      const dir = NodePath.join(makeTempDir(), "agent")
      writeFiles(dir, { ".kern/config.json": JSON.stringify({ provider: "openai", model: "test-model" }), "AGENTS.md": "# agent\n", ".gitignore": ".kern/\n" })
      git(dir, "init", "-q")
      git(dir, "add", "-A")
      git(dir, "commit", "-qm", "first")
      const dbFile = NodePath.join(dir, ".kern", "kern.db")
      // kern.db as an agent leaves it (every migration), and a journal of a process killed before it was replayed.
      yield* Effect.scoped(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1`)).pipe(Effect.provide(Database.layer({ filename: dbFile })))
      const events = [1, 2, 3].map((n) =>
        JSON.stringify(valuesOf({ tsMs: 1000 + n, decisionKey: "kernel.tool.dispatch", runId: "journal-run", traceId: "t", toolId: `tool.${n}`, status: "ok" }))
      )
      const audit = NodePath.join(dir, ".kern", "audit")
      NodeFs.mkdirSync(audit, { mode: 0o700 })
      NodeFs.writeFileSync(NodePath.join(audit, "2147483000-0-0a0b0c0d.jsonl"), `${events.join("\n")}\n`, { mode: 0o600 })
      const archive = NodePath.join(makeTempDir(), "journal.tar.gz")
      const made = yield* kern(["backup", dir, "-o", archive])
      expect(made.status, made.stderr).toBe(0)
      const restored = NodePath.join(makeTempDir(), "restored")
      const back = yield* kern(["restore", archive, "--dir", restored])
      expect(back.status, back.stderr).toBe(0)
      const copy = new (createRequire(import.meta.url)("better-sqlite3") as new (file: string) => {
        prepare: (sql: string) => { all: () => ReadonlyArray<Record<string, unknown>> }
        close: () => void
      })(NodePath.join(restored, ".kern", "kern.db"))
      const tools = copy.prepare("SELECT tool_id FROM kernel_events WHERE run_id = 'journal-run' ORDER BY ts_ms").all()
      copy.close()
      expect(tools.map((row) => row["tool_id"])).toEqual(["tool.1", "tool.2", "tool.3"])
      // Moved, the dead process's journal is retired, as an agent's start would have.
      expect(NodeFs.readdirSync(audit)).toEqual([])
    }))

  it.live("--include-secrets: .kern/.env goes into the archive (0600, and the command says so); without it, .env is absent", () =>
    Effect.gen(function*() {
      const dir = NodePath.join(makeTempDir(), "agent")
      const secret = "sk-live-backup-secret-0123456789"
      writeFiles(dir, { ".kern/config.json": JSON.stringify({ provider: "openai", model: "test-model" }), "AGENTS.md": "# agent\n", ".gitignore": ".kern/\n" })
      NodeFs.writeFileSync(NodePath.join(dir, ".kern/.env"), `OPENAI_API_KEY=${secret}\n`, { mode: 0o600 })
      git(dir, "init", "-q")
      git(dir, "add", "-A")
      git(dir, "commit", "-qm", "first")
      const out = makeTempDir()
      /** The archive's entries, and whether the secret is anywhere in its bytes once unzipped. */
      const contents = (archive: string) => ({
        entries: execFileSync("tar", ["-tzf", archive], { encoding: "utf8" }).trim().split("\n"),
        holdsSecret: gunzipSync(NodeFs.readFileSync(archive)).includes(secret)
      })

      const plain = NodePath.join(out, "plain.tar.gz")
      const without = yield* kern(["backup", dir, "-o", plain])
      expect(without.status, without.stderr).toBe(0)
      expect(without.stdout).toContain("secrets (.kern/.env) are not in it: add --include-secrets for them")
      expect(NodeFs.statSync(plain).mode & 0o777).toBe(0o600)
      expect(contents(plain).entries).toContain(".kern/config.json")
      expect(contents(plain).entries).not.toContain(".kern/.env")
      expect(contents(plain).holdsSecret).toBe(false)

      const full = NodePath.join(out, "full.tar.gz")
      const withSecrets = yield* kern(["backup", dir, "-o", full, "--include-secrets"])
      expect(withSecrets.status, withSecrets.stderr).toBe(0)
      expect(withSecrets.stdout).toContain(", config, .kern/.env")
      expect(withSecrets.stdout).toContain("it holds the agent's secrets (.kern/.env): written 0600, readable only by you")
      expect(NodeFs.statSync(full).mode & 0o777).toBe(0o600)
      expect(contents(full).entries).toContain(".kern/.env")
      expect(contents(full).holdsSecret).toBe(true)
      const json = yield* kern(["backup", dir, "-o", NodePath.join(out, "full2.tar.gz"), "--include-secrets", "--json"])
      expect(JSON.parse(json.stdout)).toMatchObject({ secrets: true })

      const verified = yield* kern(["backup", "verify", full])
      expect(verified.status, verified.stderr).toBe(0)
      expect(verified.stdout).toContain("; it holds .kern/.env")
      const restored = NodePath.join(makeTempDir(), "restored")
      const back = yield* kern(["restore", full, "--dir", restored])
      expect(back.status, back.stderr).toBe(0)
      expect(back.stdout).not.toContain("the backup holds no secrets")
      expect(NodeFs.readFileSync(NodePath.join(restored, ".kern/.env"), "utf8")).toBe(`OPENAI_API_KEY=${secret}\n`)
      expect(NodeFs.statSync(NodePath.join(restored, ".kern/.env")).mode & 0o777).toBe(0o600)
      const plainRestored = NodePath.join(makeTempDir(), "plain")
      const plainBack = yield* kern(["restore", plain, "--dir", plainRestored])
      expect(plainBack.status, plainBack.stderr).toBe(0)
      expect(plainBack.stdout).toContain("the backup holds no secrets")
      expect(NodeFs.existsSync(NodePath.join(plainRestored, ".kern/.env"))).toBe(false)
    }))
})
