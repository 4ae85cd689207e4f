import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as LockFile from "../../src/storage/LockFile.js"
import { initAgentFolder } from "../support/agentFolder.js"
import { runKernIn } from "../support/inProcessCli.js"

const env = { OPENROUTER_API_KEY: "sk-test" }

/** The folder held, as its lock says, by a live process (a `sleep` standing in for it) that ran `command`. */
const heldBy = (dir: string, command: string, address?: string) =>
  Effect.gen(function*() {
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => spawn("sleep", ["600"], { stdio: "ignore" })),
      (sleeper) => Effect.sync(() => sleeper.kill("SIGKILL"))
    )
    const holder = yield* LockFile.holderFor(child.pid!, command, address)
    NodeFs.writeFileSync(NodePath.join(dir, ".kern/agent.lock"), JSON.stringify(holder))
    return holder
  })

const lines = (text: string) => text.split("\n").filter((line) => line.trim() !== "")

describe("a rebuild while the agent runs", () => {
  it.scopedLive("recall reindex and segments rebuild say at once that the running agent must be stopped, never wait for it", () =>
    Effect.gen(function*() {
      for (const [command, address] of [["kern start", "http://127.0.0.1:4800"], ["kern run", "http://127.0.0.1:4801"], ["kern tui", undefined]] as const) {
        const dir = initAgentFolder(["--model", "openai/gpt-4.1"])
        const holder = yield* heldBy(dir, command, address)
        for (const argv of [["recall", "reindex"], ["segments", "rebuild"]]) {
          // --wait 1: a kern that waited for the agent would give up after a second with "busy" instead.
          const result = yield* Effect.promise(() => runKernIn([...argv, dir, "--wait", "1"], { env }))
          expect(result.status, result.stderr).toBe(1)
          expect(lines(result.stderr)).toEqual([
            `kern: kern ${argv.join(" ")} needs the agent folder to itself, and the agent in ${dir} runs (pid ${holder.pid}, ` +
            `${command} since ${holder.startedAt}) until it is stopped: ` +
            (argv[0] === "recall"
              ? "it keeps the index current itself as messages come in; for a full rebuild, stop it (kern stop, or Ctrl-C " +
                "where it runs), run kern recall reindex, then start it again"
              : "stop it (kern stop, or Ctrl-C where it runs), run kern segments rebuild, then start it again")
          ])
        }
      }
    }))

  it.scopedLive("a one-shot command holding the folder (kern chat) is still waited for", () =>
    Effect.gen(function*() {
      const dir = initAgentFolder(["--model", "openai/gpt-4.1"])
      const holder = yield* heldBy(dir, "kern chat")
      const result = yield* Effect.promise(() => runKernIn(["recall", "reindex", dir, "--wait", "1"], { env }))
      expect(result.status).toBe(1)
      expect(result.stderr).toContain(`waiting for the agent in ${dir}: held by pid ${holder.pid} (kern chat)`)
      expect(result.stderr).toContain("gave up after 1 s")
    }))
})
