import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodePath from "node:path"
import { HeartbeatLog } from "../../src/runtime/HeartbeatLog.js"
import * as Database from "../../src/storage/Database.js"
import { initAgentFolder } from "../support/agentFolder.js"
import { runKernIn } from "../support/inProcessCli.js"

describe("kern status: the heartbeat", () => {
  it("shows the last heartbeat, its outcome and why, and the next one, in the agent's zone", async () => {
    const dir = initAgentFolder(["--model", "m"], { timezone: "Europe/Berlin", activeHours: "08:00-22:00" })
    const before = await runKernIn(["status", dir])
    expect(before.stdout).toContain("heartbeat: every 60 min within 08:00-22:00; last none yet; next when the agent runs (kern run)")

    await Effect.runPromise(
      Effect.flatMap(HeartbeatLog, (log) =>
        Effect.zipRight(
          log.record(Date.UTC(2026, 0, 2, 9, 0), "skipped", "nothing happened since the last heartbeat"),
          log.setNext(Date.UTC(2026, 0, 2, 10, 0))
        )).pipe(
          Effect.provide(HeartbeatLog.Default.pipe(Layer.provide(Database.layer({ filename: NodePath.join(dir, ".kern/kern.db") }))))
        )
    )
    const human = await runKernIn(["status", dir])
    // 1: the folder has problems (no API key, a model without a price), listed after the heartbeat.
    expect(human.status, human.stderr).toBe(1)
    expect(human.stdout).toContain(
      "heartbeat: every 60 min within 08:00-22:00; last 2026-01-02T10:00:00+01:00 skipped (nothing happened since the last heartbeat); next 2026-01-02T11:00:00+01:00"
    )
    const json = JSON.parse((await runKernIn(["status", dir, "--json"])).stdout)
    expect(json.heartbeat).toEqual({
      intervalMinutes: 60,
      activeHours: "08:00-22:00",
      last: {
        at: "2026-01-02T10:00:00+01:00",
        atMs: Date.UTC(2026, 0, 2, 9, 0),
        outcome: "skipped",
        reason: "nothing happened since the last heartbeat"
      },
      next: "2026-01-02T11:00:00+01:00",
      nextAtMs: Date.UTC(2026, 0, 2, 10, 0)
    })
    const off = initAgentFolder(["--model", "m"], { heartbeatInterval: 0 })
    expect((await runKernIn(["status", off])).stdout).toContain("heartbeat: off (heartbeatInterval 0)")
  })
})
