import { execFileSync } from "node:child_process"
import { createRequire } from "node:module"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { runKernIn } from "./inProcessCli.js"
import { makeTempDir, writeFiles } from "./tempDir.js"

/** test/fixtures/import/<kind>: each importer's fixture, built from its format's documentation. */
export const importFixture = (kind: "kern-ai" | "openclaw" | "opencode") =>
  NodePath.resolve(import.meta.dirname, "../fixtures/import", kind)

export const git = (dir: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir, encoding: "utf8" })

/** A small agent folder (keyword recall, no model calls), a git repository with one commit. */
export const importAgent = (config: Record<string, unknown> = {}) => {
  const dir = NodePath.join(makeTempDir(), "agent")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({ provider: "openai", model: "test-model", embeddingModel: false, ...config }),
    ".gitignore": ".kern/\n",
    "IDENTITY.md": "# IDENTITY.md\nI am the test agent.\n"
  })
  git(dir, "init", "-q")
  git(dir, "add", "-A")
  git(dir, "commit", "-qm", "first")
  return dir
}

const require = createRequire(import.meta.url)

/** A copy of the kern-ai fixture with its recall.db built from the committed recall.sql. */
export const kernAiSource = () => {
  const dir = NodePath.join(makeTempDir(), "vega")
  NodeFs.cpSync(importFixture("kern-ai"), dir, { recursive: true })
  const Database = require("better-sqlite3") as new (file: string) => { exec: (sql: string) => void; close: () => void }
  const db = new Database(NodePath.join(dir, ".kern/recall.db"))
  db.exec(NodeFs.readFileSync(NodePath.join(dir, ".kern/recall.sql"), "utf8"))
  db.close()
  NodeFs.rmSync(NodePath.join(dir, ".kern/recall.sql"))
  return dir
}

export const env = { OPENAI_API_KEY: "sk-test" }

export const kern = (args: ReadonlyArray<string>) => runKernIn(args, { env })

/** The session files of an agent folder, by name. */
export const sessionFiles = (agent: string) => {
  const dir = NodePath.join(agent, ".kern/sessions")
  return NodeFs.existsSync(dir) ? NodeFs.readdirSync(dir).filter((n) => n.endsWith(".jsonl")).sort() : []
}

/** A session file's lines, parsed. */
export const sessionLines = (agent: string, name: string): Array<Record<string, unknown>> =>
  NodeFs.readFileSync(NodePath.join(agent, ".kern/sessions", name), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>)
