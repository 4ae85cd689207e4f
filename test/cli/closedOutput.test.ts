import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { initAgentWithModel } from "../support/agentFolder.js"
import { runKern } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"

const env = { OPENROUTER_API_KEY: "sk-test" }

describe("a closed stdout", () => {
  it.live("`kern chat | head -1`: the reader goes away mid-reply; kern ends quietly, the folder's lock released", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      // The first step's text reaches stdout; the second step's comes after the reader is gone.
      yield* server.reply(
        FakeReply.toolCalls([{ id: "c1", name: "read", args: { path: "IDENTITY.md", limit: 1 } }], { text: "First line.\n" }),
        FakeReply.text("Second line.\n".repeat(2000), { delay: "1 second" })
      )
      const result = yield* Effect.promise(() =>
        runKern(["chat", "-m", "two lines please"], {
          cwd: dir,
          env,
          stuckAfterMs: 100_000,
          // `head -1`: read until the first line, then close the pipe.
          onSpawn: (child) => {
            let seen = ""
            child.stdout?.on("data", (chunk: Buffer) => {
              seen += chunk.toString("utf8")
              if (seen.includes("\n")) child.stdout?.destroy()
            })
          }
        })
      )
      expect(result.stderr).not.toMatch(/EPIPE|Error:|\n\s+at /)
      expect(result.status, result.stderr).toBe(141)
      expect(NodeFs.existsSync(NodePath.join(dir, ".kern/agent.lock"))).toBe(false)
      // The second step was asked for: the reader closed while kern still had the reply to write.
      expect((yield* server.modelRequests).length).toBe(2)
    })))
})
