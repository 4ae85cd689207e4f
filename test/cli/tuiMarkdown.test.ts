import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcess } from "node:child_process"
import { initAgentWithModel } from "../support/agentFolder.js"
import { kernBin, runCollected, stdoutShows } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"

const esc = "\u001b"

describe("kern tui on a terminal", () => {
  it.live("a reply's markdown is rendered (bold, code, table), its raw escape sequences shown, not obeyed", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL, { recall: false })
      yield* server.reply(FakeReply.text("Use **care** with `rm`.\x1b[2J\n| a | b |\n|---|---|\n| 1 | 2 |\nend.\n"))
      let child: ChildProcess | undefined
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      // `script` gives kern a terminal (a pty) for stdin and stdout.
      const done = runCollected("script", ["-qfec", `${process.execPath} ${kernBin} tui`, "/dev/null"], {
        cwd: dir,
        env: { OPENROUTER_API_KEY: "sk-test", TERM: "xterm" },
        stdin: true,
        onSpawn: (spawned) => (child = spawned)
      })
      const greeted = stdoutShows(child!, "/help for commands")
      yield* Effect.promise(() => greeted)
      const answered = stdoutShows(child!, "end.")
      child!.stdin!.write("hello\r")
      yield* Effect.promise(() => answered)
      child!.stdin!.write("/quit\r")
      const result = yield* Effect.promise(() => done)
      expect(result.stdout).toContain(`Use ${esc}[1mcare${esc}[0m with ${esc}[36mrm${esc}[0m.^[[2J`)
      expect(result.stdout.replace(/\u001b\[[0-9;]*m/g, "")).toMatch(/a {2}│ {2}b\r?\n─+──┼───+\r?\n1 {2}│ {2}2/)
      expect(result.stdout).not.toContain("|---|")
      expect(result.stdout).not.toContain(`${esc}[2J`)
    })))
})
