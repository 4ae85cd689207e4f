import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { processRunning } from "../../src/storage/processState.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { killedAtEnd, recordedPid } from "../support/backgroundAgent.js"
import { runKern } from "../support/cli.js"
import { make as makeFakeServer } from "../support/fakeModelServer.js"
import { make as makeFakeTelegram } from "../support/fakeTelegram.js"
import { fillDisk, tinyDisk } from "../support/tinyDisk.js"

/** Appends to `file` until the disk refuses even one more byte (fillDisk leaves the slack of the log's last page). */
const fillFile = (file: string) => {
  for (;;) {
    try {
      NodeFs.appendFileSync(file, "#")
    } catch {
      return
    }
  }
}

describe("the background agent's log on a full disk", () => {
  it.live("a log line that cannot be written is dropped and the agent goes on (an unheard stderr error ended the process)", () =>
    Effect.scoped(Effect.gen(function*() {
      const model = yield* makeFakeServer
      const telegram = yield* makeFakeTelegram()
      const dir = initAgentWithModel(model.baseURL, { recall: false, heartbeatInterval: 0 })
      const logs = NodePath.join(dir, ".kern/logs")
      yield* tinyDisk(logs)
      yield* killedAtEnd(dir)
      const env = { OPENROUTER_API_KEY: "sk-test", TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.root }
      const started = yield* Effect.promise(() => runKern(["start", dir], { env }))
      expect(started.status, started.stderr).toBe(0)
      const pid = recordedPid(dir)
      yield* telegram.awaitCalls("getUpdates", 1)
      expect(fillDisk(NodePath.join(logs, "filler"))).toBe("ENOSPC")
      fillFile(NodePath.join(logs, "kern.log"))

      // Each stranger is logged ("asks to pair"), which fails now, and answered with a code.
      for (const [i, id] of [501, 502, 503].entries()) {
        yield* telegram.message({ from: { id, first_name: `S${i}` }, text: "hello" })
        yield* telegram.awaitChat(id, (messages) => messages.some((m) => m.text.includes("kern pair"))).pipe(
          Effect.timeoutFail({ duration: "60 seconds", onTimeout: () => new Error(`stranger ${id} was never answered: the agent died`) })
        )
      }
      expect(processRunning(pid)).toBe(true)
      NodeFs.rmSync(NodePath.join(logs, "filler"))
      expect((yield* Effect.promise(() => runKern(["stop", dir], { env }))).status).toBe(0)
    })), 120_000)
})
