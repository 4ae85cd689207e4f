import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { type CliResult, kernBin, runCollected } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { makeTempDir } from "../support/tempDir.js"
import { killedAtEnd } from "../support/backgroundAgent.js"

const env = { OPENROUTER_API_KEY: "sk-test" }

/** Runs `kern` under umask 000: whatever kern creates is as open as it asks for, no more closed than that. */
const kernUnmasked = (args: ReadonlyArray<string>, cwd: string): Promise<CliResult> =>
  runCollected("/bin/sh", ["-c", `umask 000; exec "$0" "$@"`, process.execPath, kernBin, ...args], { cwd, env })

const kern = (args: ReadonlyArray<string>, cwd: string) => Effect.promise(() => kernUnmasked(args, cwd))

/** Every folder and regular file under `dir` (itself included), with its permission bits, as `mode path`. */
const modes = (dir: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  const walk = (path: string) => {
    const info = NodeFs.lstatSync(path)
    if (info.isSymbolicLink()) return
    out.push(`${(info.mode & 0o777).toString(8)} ${NodePath.relative(NodePath.dirname(dir), path)}`)
    if (info.isDirectory()) for (const name of NodeFs.readdirSync(path)) walk(NodePath.join(path, name))
  }
  walk(dir)
  return out
}
const notPrivate = (dir: string) =>
  modes(dir).filter((line) => {
    const [mode = "", path = ""] = line.split(" ")
    return NodeFs.lstatSync(NodePath.join(NodePath.dirname(dir), path)).isDirectory() ? mode !== "700" : mode !== "600"
  })

describe(".kern/ is private: 0700 folders, 0600 files, whatever the umask", () => {
  it.live("init, a chat whose tool output becomes an artifact, start (pid, log, lock), chat through it, stop — all under umask 000", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const cwd = makeTempDir()
      const init = yield* kern(["init", "agent", "--model", "test-model", "--base-url", server.baseURL], cwd)
      expect(init.status, init.stderr).toBe(0)
      const dir = NodePath.join(cwd, "agent")
      const kernDir = NodePath.join(dir, ".kern")
      yield* killedAtEnd(dir)
      expect(notPrivate(kernDir)).toEqual([])

      yield* server.reply(
        FakeReply.toolCalls([{ id: "c1", name: "bash", args: { command: "seq 1 40000" } }]),
        FakeReply.text("Counted.")
      )
      const chat = yield* kern(["chat", "-m", "count"], dir)
      expect(chat.status, chat.stderr).toBe(0)
      const kinds = modes(kernDir).join("\n")
      for (const part of ["kern.db", "sessions/", "artifacts/", "session-counts/"]) expect(kinds).toContain(part)
      expect(notPrivate(kernDir)).toEqual([])

      const started = yield* kern(["start"], dir)
      expect(started.status, started.stderr).toBe(0)
      yield* server.reply(FakeReply.text("From the background."))
      const through = yield* kern(["chat", "-m", "hi"], dir)
      expect(through.status, through.stderr).toBe(0)
      const running = modes(kernDir).join("\n")
      for (const part of ["agent.pid", "agent.lock", "logs/", "kern.db-wal", "kern.db-shm"]) expect(running).toContain(part)
      expect(notPrivate(kernDir)).toEqual([])
      expect((yield* kern(["stop"], dir)).status).toBe(0)
      expect(notPrivate(kernDir)).toEqual([])
    })), 300_000)

  it.live("a .kern/ left open (0755 folders, 0644 files) is tightened when a runtime starts", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const cwd = makeTempDir()
      expect((yield* kern(["init", "agent", "--model", "test-model", "--base-url", server.baseURL], cwd)).status).toBe(0)
      const dir = NodePath.join(cwd, "agent")
      const kernDir = NodePath.join(dir, ".kern")
      yield* server.reply(FakeReply.text("one"))
      expect((yield* kern(["chat", "-m", "one"], dir)).status).toBe(0)
      // As an older kern left it, plus a folder and a file of the operator's own.
      NodeFs.mkdirSync(NodePath.join(kernDir, "old/nested"), { recursive: true })
      NodeFs.writeFileSync(NodePath.join(kernDir, "old/nested/notes.txt"), "x")
      const outside = NodePath.join(cwd, "outside.txt")
      NodeFs.writeFileSync(outside, "not kern's")
      NodeFs.chmodSync(outside, 0o644)
      NodeFs.symlinkSync(outside, NodePath.join(kernDir, "link-out"))
      for (const line of modes(kernDir)) {
        const path = NodePath.join(dir, line.split(" ")[1] ?? "")
        NodeFs.chmodSync(path, NodeFs.statSync(path).isDirectory() ? 0o755 : 0o644)
      }
      expect(notPrivate(kernDir).length).toBeGreaterThan(5)

      yield* server.reply(FakeReply.text("two"))
      const chat = yield* kern(["chat", "-m", "two"], dir)
      expect(chat.status, chat.stderr).toBe(0)
      expect(notPrivate(kernDir)).toEqual([])
      // A symlink's target is not kern's to change.
      expect(NodeFs.statSync(outside).mode & 0o777).toBe(0o644)
    })), 240_000)
})
