import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ChildProcess } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { initAgentWithModel } from "../support/agentFolder.js"
import { runKern } from "../support/cli.js"
import { make as makeFakeServer } from "../support/fakeModelServer.js"
import { writeSessionFixture } from "../support/sessionFixture.js"
import { makeTempDir } from "../support/tempDir.js"

const env = { OPENROUTER_API_KEY: "sk-test" }

const stats = async (dir: string) => JSON.parse((await runKern(["recall", "stats", "--json"], { cwd: dir, env })).stdout)

/** Resolves once `child`'s stderr has shown `text`. */
const stderrShows = (child: ChildProcess, text: string) =>
  new Promise<void>((resolve) => {
    let seen = ""
    child.stderr?.on("data", (chunk: Buffer) => {
      seen += chunk.toString("utf8")
      if (seen.includes(text)) resolve()
    })
  })

describe("kern recall reindex cut short", () => {
  it.scopedLive("a reindex killed mid-way is noted in kern.db, and the agent's next start rebuilds the index in full", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL, { embeddingModel: false })
      writeSessionFixture(dir, 20_000)
      // The same folder indexed in full: what a finished rebuild gives.
      const reference = NodePath.join(makeTempDir(), "agent")
      NodeFs.cpSync(dir, reference, { recursive: true })
      const full = yield* Effect.promise(() => runKern(["recall", "reindex"], { cwd: reference, env }))
      expect(full.status, full.stderr).toBe(0)
      const complete = yield* Effect.promise(() => stats(reference))
      expect(complete.messages).toBe(20_000)

      let reindex: ChildProcess | undefined
      const killed = runKern(["recall", "reindex"], { cwd: dir, env, onSpawn: (child) => (reindex = child) })
      yield* Effect.addFinalizer(() => Effect.sync(() => reindex?.kill("SIGKILL")))
      yield* Effect.promise(() => stderrShows(reindex!, "messages chunked"))
      reindex!.kill("SIGKILL")
      yield* Effect.promise(() => killed)
      const partial = yield* Effect.promise(() => stats(dir))
      expect(partial.chunks).toBeLessThan(complete.chunks)

      let agent: ChildProcess | undefined
      const running = runKern(["run"], { cwd: dir, env, stdin: true, onSpawn: (child) => (agent = child) })
      yield* Effect.addFinalizer(() => Effect.sync(() => agent?.kill("SIGKILL")))
      let now: { messages: number; chunks: number; backfillRunning: boolean } | undefined
      yield* Effect.gen(function*() {
        for (;;) {
          now = yield* Effect.promise(() => stats(dir))
          if (now!.messages === complete.messages && now!.chunks === complete.chunks && !now!.backfillRunning) return
          yield* Effect.sleep("200 millis")
        }
      }).pipe(Effect.timeoutFail({ duration: "150 seconds", onTimeout: () => new Error(`never rebuilt: ${JSON.stringify(now)}`) }))
      agent!.stdin!.end()
      const stopped = yield* Effect.promise(() => running)
      expect(stopped.status, stopped.stderr).toBe(0)
    }), { timeout: 300_000 })
})
