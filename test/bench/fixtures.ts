import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePlatformPath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { type ChildProcess, spawn } from "node:child_process"
import { Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as AgentConfig from "../../src/config/AgentConfig.js"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { ContextWindow } from "../../src/context/ContextWindow.js"
import * as SegmentStoreSql from "../../src/context/SegmentStoreSql.js"
import * as Summarizer from "../../src/context/Summarizer.js"
import * as Embedder from "../../src/recall/Embedder.js"
import * as SessionIndex from "../../src/session/SessionIndex.js"
import * as Database from "../../src/storage/Database.js"
import { SessionStore } from "../../src/session/SessionStore.js"
import { writeSessionFixture } from "../support/sessionFixture.js"
import { sleep } from "./waitFor.js"

const memory: Record<string, string> = {
  "KERN.md": "# KERN.md\nYou run under kern. Tools: bash, read, write, edit, glob, grep, webfetch, kern.\n",
  "AGENTS.md": "# AGENTS.md\nKeep notes in notes/, knowledge in knowledge/. Answer briefly.\n",
  "IDENTITY.md": "# IDENTITY.md\nI am bench, the house agent: router, NAS, backups.\n",
  "USERS.md": "# USERS.md\n- operator: the owner, terse.\n",
  "KNOWLEDGE.md": "# KNOWLEDGE.md\n- knowledge/router.md: the router's setup.\n",
  "notes/2026-11-22.md": "# 2026-11-22\n- moved the DHCP range; DNS now on the pi.\n"
}

/**
 * A fresh agent folder in a temp dir, with memory files as `kern init` leaves them (a folder without them makes
 * every step fail to read them, which costs more than reading), `config`, and, when `messages` is given, one
 * session of that size.
 */
export const benchAgent = (messages: number | undefined, config: Record<string, unknown> = {}) => {
  const dir = NodePath.join(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kern-bench-")), "agent")
  NodeFs.mkdirSync(NodePath.join(dir, ".kern"), { recursive: true })
  NodeFs.mkdirSync(NodePath.join(dir, "notes"), { recursive: true })
  for (const [name, text] of Object.entries(memory)) NodeFs.writeFileSync(NodePath.join(dir, name), text)
  NodeFs.writeFileSync(NodePath.join(dir, ".kern/config.json"), JSON.stringify(config))
  const session = messages === undefined ? undefined : writeSessionFixture(dir, messages)
  return { dir, session, remove: () => NodeFs.rmSync(NodePath.dirname(dir), { recursive: true, force: true }) }
}

/**
 * What src/main.ts (and src/quick/runQuick.ts, with the terminal added by src/quick/chatLocal.ts) give every command:
 * a file system, paths and the terminal. A command that runs processes adds its executor itself, and no command
 * builds a worker manager, which @effect/platform-node's NodeContext.layer adds to these (a cold process built them for
 * every session opened here, ~20 ms of CPU that no `kern chat` spends).
 */
export const cliPlatformLayer = Layer.mergeAll(NodeFileSystem.layer, NodePlatformPath.layer, NodeTerminal.layer)

/**
 * SessionStore over the folder's sessions and the context (its cut and segments in kern.db), as `kern chat` has
 * them, on the platform the CLI provides; summaries come from the deterministic summarizer (no model).
 */
export const storeLayer = (dir: string) =>
  Layer.mergeAll(
    SessionStore.Default.pipe(Layer.provide(Layer.merge(SessionIndex.layer, KnownSecrets.layer))),
    ContextWindow.Default.pipe(
      Layer.provide(Layer.mergeAll(SegmentStoreSql.layer, Summarizer.layerTest(), Embedder.layerNone("bench")))
    )
  ).pipe(
    Layer.provideMerge(Database.layer({ filename: NodePath.join(dir, ".kern", "kern.db") })),
    Layer.provideMerge(AgentConfig.layer(dir)),
    Layer.provide(Layer.succeed(ProcessEnv, {})),
    Layer.provideMerge(cliPlatformLayer)
  )

/**
 * The fake model server in a child process of its own (answering "ok" to every model request), so none of its
 * work (parsing a long prompt) is counted as kern's, nor runs on the bench's event loop.
 */
export const startModelServerProcess = () =>
  new Promise<{ readonly baseURL: string; readonly child: ChildProcess }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "test/support/fakeModelServerProcess.ts"], {
      cwd: NodePath.resolve(import.meta.dirname, "../.."),
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
      const line = out.split("\n")[0]
      if (out.includes("\n") && line !== undefined) resolve({ baseURL: line.trim(), child })
    })
    child.on("exit", (code) => reject(new Error(`the fake model server exited (${code})`)))
  })

export interface Model {
  readonly baseURL: string
  /** When the model received the request of `tag`'s turn (epoch ms), waited for up to 120 s. */
  readonly arrivalOf: (tag: string) => Promise<number>
  readonly stop: () => void
}

/**
 * The fake model server's process, with when each `BENCH-FIRE-<tag>` turn's request reached it (its `arrived` lines).
 */
export const startModel = async (): Promise<Model> => {
  const server = await startModelServerProcess()
  const arrivals = new Map<string, number>()
  let out = ""
  server.child.stdout!.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8")
    const lines = out.split("\n")
    out = lines.pop() ?? ""
    for (const line of lines) {
      const arrived = /^arrived (\S+) (\d+)$/.exec(line)
      if (arrived !== null && !arrivals.has(arrived[1]!)) arrivals.set(arrived[1]!, Number(arrived[2]))
    }
  })
  const arrivalOf = async (tag: string) => {
    const deadline = Date.now() + 120_000
    while (!arrivals.has(tag)) {
      if (Date.now() > deadline) throw new Error(`the turn of ${tag} never reached the model`)
      await sleep(2)
    }
    return arrivals.get(tag)!
  }
  return { baseURL: server.baseURL, arrivalOf, stop: () => server.child.kill() }
}
