import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as NodePath from "node:path"

const root = NodePath.resolve(import.meta.dirname, "../..")

/** A runner process of test/support/clusterRunner.ts: what it acknowledged, and its lines. */
export interface RunnerProcess {
  readonly name: string
  readonly port: number
  readonly child: ChildProcess
  /** Inbox id → Date.now() when the runner printed `acked <id>`. */
  readonly acked: Map<number, number>
  readonly failed: Array<string>
  readonly ready: Promise<void>
  readonly send: (agent: string, conversation: string, id: number, text: string) => void
  /** kill -9; resolves once the process is gone. */
  readonly kill9: () => Promise<void>
  /** SIGTERM (a clean stop); resolves once the process is gone. */
  readonly stop: () => Promise<void>
  readonly output: () => string
}

export interface RunnerOptions {
  readonly url: string
  readonly name: string
  readonly port: number
  readonly lockExpirationMs?: number
  readonly pollMs?: number
  readonly hold?: boolean
}

/**
 * Starts one runner (`node --import tsx test/support/clusterRunner.ts`, or plain node on `bundle`, the script bundled
 * as it would ship), its stdin a pipe for `send` lines.
 */
export const startRunner = (options: RunnerOptions, bundle?: string): RunnerProcess => {
  const script = bundle === undefined ? ["--import", "tsx", "test/support/clusterRunner.ts"] : [bundle]
  const child = spawn(process.execPath, [...script, JSON.stringify(options)], {
    cwd: root,
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp" },
    stdio: ["pipe", "pipe", "pipe"]
  })
  const acked = new Map<number, number>()
  const failed: Array<string> = []
  let out = ""
  let pending = ""
  let onReady: () => void = () => {}
  let onExit: (error: Error) => void = () => {}
  const ready = new Promise<void>((resolve, reject) => {
    onReady = resolve
    onExit = reject
  })
  child.stdout?.on("data", (chunk: Buffer) => {
    const text = chunk.toString("utf8")
    out += text
    pending += text
    const lines = pending.split("\n")
    pending = lines.pop() ?? ""
    for (const line of lines) {
      if (line === "ready") onReady()
      const ack = /^acked (\d+)$/.exec(line)
      if (ack !== null) acked.set(Number(ack[1]), Date.now())
      if (line.startsWith("failed ")) failed.push(line)
    }
  })
  child.stderr?.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      onExit(new Error(`runner ${options.name} exited (${code ?? signal}) before it was ready:\n${out}`))
      resolve()
    }))
  return {
    name: options.name,
    port: options.port,
    child,
    acked,
    failed,
    ready,
    send: (agent, conversation, id, text) => child.stdin?.write(`send ${agent} ${conversation} ${id} ${text}\n`),
    kill9: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      return exited
    },
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
      return exited
    },
    output: () => out
  }
}

/** The tables the runners write (clusterRunner.ts): every handler call, each message once, each hold of an agent. */
export const createRunnerTables = (sql: SqlClient.SqlClient) =>
  Effect.all([
    sql`CREATE TABLE runner_attempts (agent TEXT NOT NULL, conversation TEXT NOT NULL, inbox_id INTEGER NOT NULL,
      runner TEXT NOT NULL, at TIMESTAMPTZ NOT NULL)`,
    sql`CREATE TABLE runner_handled (agent TEXT NOT NULL, conversation TEXT NOT NULL, inbox_id INTEGER NOT NULL,
      runner TEXT NOT NULL, at TIMESTAMPTZ NOT NULL, PRIMARY KEY (agent, inbox_id))`,
    sql`CREATE TABLE runner_holds (id SERIAL PRIMARY KEY, agent TEXT NOT NULL, runner TEXT NOT NULL,
      started_at TIMESTAMPTZ NOT NULL, ended_at TIMESTAMPTZ)`
  ], { discard: true })
