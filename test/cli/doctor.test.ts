import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync, spawnSync } from "node:child_process"
import { createRequire } from "node:module"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Recall } from "../../src/recall/Recall.js"
import * as FakeSlack from "../support/fakeSlack.js"
import * as FakeTelegram from "../support/fakeTelegram.js"
import { FakeReply, makeWith } from "../support/fakeModelServer.js"
import { runKernIn } from "../support/inProcessCli.js"
import { changingServer } from "../support/mcpServers.js"
import { operatorTurn, testRuntime } from "../support/operatorTurn.js"
import { writeSessionFixture } from "../support/sessionFixture.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

// Each problem is made for real in one healthy folder (a turn answered, indexed, its memory committed, a
// Telegram bot, a Slack app and an MCP server that work): the doctor must name it, say what to do and exit 1.

const env = { OPENAI_API_KEY: "sk-test-doctor-key" }

const git = (dir: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir, encoding: "utf8" })

interface Report {
  readonly ok: boolean
  readonly checks: ReadonlyArray<{ readonly check: string; readonly level: string; readonly summary: string; readonly fixes: ReadonlyArray<string> }>
}

/** `kern doctor --json`: its exit status and report, with the report's lines and fixes as text to look for. */
const doctor = (dir: string) =>
  Effect.promise(async () => {
    const json = await runKernIn(["doctor", dir, "--json"], { env })
    const report = JSON.parse(json.stdout) as Report
    const text = report.checks.map((check) => [check.summary, ...check.fixes.map((fix) => `${check.check}: ${fix}`)].join("\n")).join("\n")
    return { status: json.status, stderr: json.stderr, report, text }
  })

const doctorText = (dir: string) => Effect.promise(() => runKernIn(["doctor", dir], { env }))

const levels = (report: Report) => Object.fromEntries(report.checks.map((check) => [check.check, check.level]))
const checkOf = (report: Report, name: string) => report.checks.find((check) => check.check === name)!

const allOk = {
  config: "ok",
  permissions: "ok",
  lock: "ok",
  database: "ok",
  recall: "ok",
  summarizer: "ok",
  channels: "ok",
  mcp: "ok",
  disk: "ok",
  git: "ok"
}

/** A folder as a long-running agent leaves it, and the fakes its channels and MCP server talk to. */
const healthyFolder = Effect.gen(function*() {
  const model = yield* makeWith({ fallback: FakeReply.text("The boat is at pier 7.") })
  yield* model.embeddings({ bagOfWords: { dimensions: 64 } })
  const telegram = yield* FakeTelegram.make()
  const slack = yield* FakeSlack.make()
  const dir = NodePath.join(makeTempDir(), "agent")
  const config = {
    provider: "openai",
    model: "test-model",
    baseURL: model.baseURL,
    embeddingModel: "test-embedding",
    prices: { "test-model": { input: 0, output: 0 } }
  }
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify(config),
    ".gitignore": ".kern/\n",
    "AGENTS.md": "# agent\n"
  })
  const turn = yield* Effect.gen(function*() {
    const outcome = yield* operatorTurn("where is the boat?")
    yield* Effect.flatMap(Recall, (recall) => recall.backfill)
    return outcome
  }).pipe(Effect.provide(testRuntime(dir)))
  expect(turn.outcome.failure).toBeUndefined()
  git(dir, "init", "-q")
  git(dir, "add", "-A")
  git(dir, "commit", "-qm", "memory")
  // Channels and the MCP server only now: the turn above ran without them.
  const mcp = changingServer(NodePath.join(makeTempDir(), "tools.json"), [{ name: "lookup", description: "Looks a word up.", readOnly: true }])
  NodeFs.writeFileSync(NodePath.join(dir, ".kern/config.json"), JSON.stringify({ ...config, mcpServers: { words: mcp.config } }))
  NodeFs.writeFileSync(
    NodePath.join(dir, ".kern/.env"),
    [
      `TELEGRAM_BOT_TOKEN=${telegram.token}`,
      `TELEGRAM_API_ROOT=${telegram.root}`,
      `SLACK_BOT_TOKEN=${slack.botToken}`,
      `SLACK_APP_TOKEN=${slack.appToken}`,
      `SLACK_API_URL=${slack.apiUrl}`,
      ""
    ].join("\n"),
    { mode: 0o600 }
  )
  NodeFs.chmodSync(NodePath.join(dir, ".kern"), 0o700)
  return { dir, telegram }
})

/** The number of a page kern.db keeps `table` in (its b-tree's root), and the page size. */
const rootPageOf = (dbFile: string, table: string) => {
  const Database = createRequire(import.meta.url)("better-sqlite3") as new (file: string) => {
    prepare: (sql: string) => { get: (...args: Array<unknown>) => Record<string, number> }
    close: () => void
  }
  const db = new Database(dbFile)
  const root = db.prepare("SELECT rootpage FROM sqlite_master WHERE name = ?").get(table)["rootpage"]!
  const size = db.prepare("PRAGMA page_size").get()["page_size"]!
  db.close()
  return { root, size }
}

describe("kern doctor", () => {
  it.live("a healthy folder: every check ok, exit 0; each problem made for real: named, what to do, exit 1", () =>
    Effect.scoped(Effect.gen(function*() {
      const { dir, telegram } = yield* healthyFolder

      const healthy = yield* doctor(dir)
      expect(healthy.status, healthy.text + healthy.stderr).toBe(0)
      expect(levels(healthy.report)).toEqual(allOk)
      expect(healthy.report.ok).toBe(true)
      const healthyText = yield* doctorText(dir)
      expect(healthyText.status).toBe(0)
      expect(healthyText.stdout).toMatch(/^ok {7}lock {9}no kern runs this agent now$/m)
      expect(healthyText.stdout.trimEnd().endsWith("all is well: 10 checks ok")).toBe(true)
      expect(checkOf(healthy.report, "channels").summary).toBe("telegram @kern_test_bot and slack take their tokens")
      expect(checkOf(healthy.report, "mcp").summary).toContain("words (1 tool)")
      expect(checkOf(healthy.report, "recall").summary).toContain("each with its vector")
      expect(healthyText.stdout).not.toContain("--fix")
      // Read-only: the doctor leaves every file as it found it (kern.db's reader may add SQLite's -wal and -shm).
      const snapshot = () =>
        NodeFs.readdirSync(dir, { recursive: true }).map(String).filter((name) => !/kern\.db-(wal|shm)$/.test(name)).sort().map((name) => {
          const stat = NodeFs.statSync(NodePath.join(dir, name))
          return `${name} ${stat.mode} ${stat.isFile() ? `${stat.size} ${stat.mtimeMs}` : ""}`
        })
      const before = snapshot()
      expect((yield* doctor(dir)).status).toBe(0)
      expect(snapshot()).toEqual(before)

      // Each problem is made in the folder, looked at, and undone (a copy would be a new inode for every session,
      // which recall rightly reads as sessions replaced).
      const problemWhile = (make: () => void, undo: () => void) =>
        Effect.acquireUseRelease(Effect.sync(make), () => doctor(dir), () => Effect.sync(undo))

      // .env readable by others.
      const envFile = NodePath.join(dir, ".kern/.env")
      const [opened, openedText] = yield* Effect.acquireUseRelease(
        Effect.sync(() => NodeFs.chmodSync(envFile, 0o644)),
        () => Effect.all([doctor(dir), doctorText(dir)]),
        () => Effect.sync(() => NodeFs.chmodSync(envFile, 0o600))
      )
      expect(opened.status).toBe(1)
      expect(levels(opened.report)).toEqual({ ...allOk, permissions: "problem" })
      expect(openedText.status).toBe(1)
      expect(openedText.stdout).toMatch(new RegExp(`^problem {2}permissions  ${envFile}.* is readable by other users \\(mode 644`, "m"))
      expect(openedText.stdout).toContain(`What to do:\n  permissions: chmod 600 ${envFile}\n`)
      expect(openedText.stdout.trimEnd().endsWith("1 problem, 0 warnings")).toBe(true)
      expect(openedText.stderr).toContain("kern: doctor found 1 problem")

      // A lock left by a process that is gone.
      const dead = spawnSync(process.execPath, ["-e", ""]).pid!
      const lockFile = NodePath.join(dir, ".kern/agent.lock")
      const stale = yield* problemWhile(
        () => NodeFs.writeFileSync(lockFile, JSON.stringify({ pid: dead, startedAt: new Date().toISOString(), host: NodeOs.hostname(), command: "run" })),
        () => NodeFs.rmSync(lockFile)
      )
      expect(stale.status).toBe(1)
      expect(levels(stale.report)).toEqual({ ...allOk, lock: "problem" })
      expect(stale.text).toContain(`${lockFile} is stale: pid ${dead} (run) is no longer running`)
      expect(stale.text).toContain(`rm ${lockFile}`)

      // A Telegram token the Bot API refuses.
      const envText = NodeFs.readFileSync(envFile, "utf8")
      const rejected = yield* problemWhile(
        () => NodeFs.writeFileSync(envFile, envText.replace(telegram.token, "999:not-the-token")),
        () => NodeFs.writeFileSync(envFile, envText)
      )
      expect(rejected.status).toBe(1)
      expect(levels(rejected.report)).toEqual({ ...allOk, channels: "problem" })
      expect(rejected.text).toContain("Telegram refuses TELEGRAM_BOT_TOKEN (Unauthorized)")
      expect(rejected.text).toContain("channels: set TELEGRAM_BOT_TOKEN in .kern/.env")
      expect(rejected.text).not.toContain("999:not-the-token")

      // An MCP server whose command does not exist.
      const configFile = NodePath.join(dir, ".kern/config.json")
      const configText = NodeFs.readFileSync(configFile, "utf8")
      const missing = yield* problemWhile(
        () => NodeFs.writeFileSync(configFile, JSON.stringify({ ...JSON.parse(configText), mcpServers: { ghost: { command: "/nonexistent/kern-mcp-ghost" } } })),
        () => NodeFs.writeFileSync(configFile, configText)
      )
      expect(missing.status).toBe(1)
      expect(levels(missing.report)).toEqual({ ...allOk, mcp: "problem" })
      expect(missing.text).toContain("MCP server \"ghost\" failed:")
      expect(missing.text).toContain("mcp: check mcpServers.ghost.command (\"/nonexistent/kern-mcp-ghost\") and args in .kern/config.json")

      // A session recall has not indexed.
      const unindexed = yield* problemWhile(
        () => writeSessionFixture(dir, 12, "20261122-100000-000-cafe"),
        () => NodeFs.rmSync(NodePath.join(dir, ".kern/sessions/20261122-100000-000-cafe.jsonl"))
      )
      expect(unindexed.status).toBe(1)
      expect(levels(unindexed.report)).toEqual({ ...allOk, recall: "problem" })
      expect(unindexed.text).toContain("12 messages in 1 session not yet indexed")
      expect(unindexed.text).toContain("kern recall reindex")

      // A damaged page of kern.db.
      const dbFile = NodePath.join(dir, ".kern/kern.db")
      expect(NodeFs.existsSync(`${dbFile}-wal`) ? NodeFs.statSync(`${dbFile}-wal`).size : 0).toBe(0)
      const { root, size } = rootPageOf(dbFile, "recall_messages")
      const fd = NodeFs.openSync(dbFile, "r+")
      NodeFs.writeSync(fd, Buffer.alloc(size, 0xa5), 0, size, (root - 1) * size)
      NodeFs.closeSync(fd)
      const broken = yield* doctor(dir)
      expect(broken.status).toBe(1)
      expect(levels(broken.report)).toEqual({ ...allOk, database: "problem", recall: "warning", summarizer: "warning" })
      expect(broken.text).toContain(`${dbFile} is damaged: SQLite's integrity check fails (database disk image is malformed)`)
      expect(broken.text).toContain("Put a good copy back (from a backup)")
      expect(checkOf(broken.report, "recall").summary).toBe("not checked: kern.db could not be read")
    })), 180_000)

  it.live("a config that does not load is a problem, and the checks that need it say they were skipped", () =>
    Effect.promise(async () => {
      const dir = NodePath.join(makeTempDir(), "agent")
      writeFiles(dir, { ".kern/config.json": JSON.stringify({ provider: "openai", model: "m", maxSteps: "many" }) })
      NodeFs.chmodSync(NodePath.join(dir, ".kern"), 0o700)
      const result = await runKernIn(["doctor", dir], { env })
      expect(result.status).toBe(1)
      expect(result.stdout).toMatch(/^problem {2}config {7}.*key "maxSteps": expected/m)
      expect(result.stdout).toContain("config: correct")
      expect(result.stdout).toMatch(/^warning  channels {5}not checked: the config does not load/m)
      const notAgent = await runKernIn(["doctor", makeTempDir()], { env })
      expect(notAgent.status).toBe(2)
      expect(notAgent.stderr).toContain("is not an agent folder")
    }))
})
