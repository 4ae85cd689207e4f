import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Option, Scope } from "effect"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as LockFile from "../../src/storage/LockFile.js"
import { makeTempDir } from "../support/tempDir.js"

const deadPid = () => spawnSync("true").pid

const stale = (file: string) =>
  NodeFs.writeFileSync(
    file,
    JSON.stringify({ pid: deadPid(), processStart: "1", startedAt: "2026-01-01T00:00:00.000Z", host: NodeOs.hostname(), command: "kern chat" })
  )

describe("LockFile", () => {
  it("reads the start time after a command name holding spaces and parentheses", () => {
    const stat = "4242 (kern (x) y) S 1 4242 4242 0 -1 4194560 10 0 0 0 1 2 0 0 20 0 1 0 987654 1234 56"
    assert.deepStrictEqual(LockFile.parseProcessStart(stat), Option.some("987654"))
    assert.deepStrictEqual(LockFile.parseProcessStart("garbage"), Option.none())
  })

  it.live("a second holder in the same process is refused until the first scope closes; the file goes with it", () =>
    Effect.gen(function*() {
      const file = NodePath.join(makeTempDir(), "agent.lock")
      const first = yield* LockFile.currentHolder("first")
      const second = yield* LockFile.currentHolder("second")
      const scope = yield* Scope.make()
      yield* LockFile.acquire(file, first, { wait: 0, poll: 10 }).pipe(Scope.extend(scope))
      const busy = yield* Effect.scoped(LockFile.acquire(file, second, { wait: "50 millis", poll: 10 })).pipe(Effect.flip)
      assert.strictEqual(busy._tag, "LockBusy")
      if (busy._tag === "LockBusy") assert.strictEqual(Option.getOrThrow(busy.holder).command, "first")
      assert.strictEqual(Option.getOrThrow(yield* LockFile.readHolder(file)).pid, process.pid)
      yield* Scope.close(scope, Exit.void)
      assert.isFalse(NodeFs.existsSync(file))
      assert.isTrue(Option.isNone(yield* LockFile.readHolder(file)))
      yield* Effect.scoped(LockFile.acquire(file, second, { wait: 0, poll: 10 }))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.live("twenty takers of one stale lock at once: exactly one takes it over, the others see it held", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      const file = NodePath.join(dir, "agent.lock")
      stale(file)
      assert.isTrue(Option.isNone(yield* LockFile.readHolder(file)))
      const attempts = yield* Effect.all(
        Array.from({ length: 20 }, (_, i) =>
          Effect.flatMap(LockFile.currentHolder(`taker ${i}`), (holder) => LockFile.tryAcquire(file, holder))),
        { concurrency: "unbounded" }
      )
      const winners = attempts.flatMap((a, i) => a._tag === "Acquired" ? [i] : [])
      assert.lengthOf(winners, 1)
      const holder = JSON.parse(NodeFs.readFileSync(file, "utf8"))
      assert.strictEqual(holder.command, `taker ${winners[0]}`)
      for (const attempt of attempts) {
        if (attempt._tag === "Busy") assert.strictEqual(Option.getOrThrow(attempt.holder).command, holder.command)
      }
      assert.deepStrictEqual(NodeFs.readdirSync(dir), ["agent.lock"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.live("a lock taken over after its holder was judged gone is not removed by that holder's release", () =>
    Effect.gen(function*() {
      const file = NodePath.join(makeTempDir(), "agent.lock")
      const scope = yield* Scope.make()
      yield* LockFile.acquire(file, yield* LockFile.currentHolder("old"), { wait: 0, poll: 10 }).pipe(Scope.extend(scope))
      const theirs = JSON.stringify({ pid: 1, startedAt: "x", host: "elsewhere", command: "kern run" })
      NodeFs.writeFileSync(file, theirs)
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(NodeFs.readFileSync(file, "utf8"), theirs)
      // A holder on another host cannot be checked from here: it counts as live.
      assert.strictEqual(Option.getOrThrow(yield* LockFile.readHolder(file)).command, "kern run")
    }).pipe(Effect.provide(NodeContext.layer)))
})
