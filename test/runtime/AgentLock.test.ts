import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Option, Ref, Scope, TestClock } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as AgentLock from "../../src/runtime/AgentLock.js"
import { makeTempDir } from "../support/tempDir.js"

const lockOf = Effect.gen(function*() {
  const dir = makeTempDir()
  const kernDir = NodePath.join(dir, ".kern")
  NodeFs.mkdirSync(kernDir)
  return yield* AgentLock.make(dir, kernDir, NodePath.join(kernDir, "agent.lock"))
})

/** Until the waiter sleeps on the TestClock or is done (its attempts do real file I/O, which takes real time). */
const settle = (waiter: Fiber.RuntimeFiber<unknown, unknown>) =>
  Effect.gen(function*() {
    while ((yield* TestClock.sleeps()).length === 0 && waiter.unsafePoll() === null) {
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
    }
  })

describe("AgentLock", () => {
  it.scoped("a second runtime waits on the Clock with one line, and holds the folder once the first lets go", () =>
    Effect.gen(function*() {
      const lock = yield* lockOf
      const first = yield* Scope.make()
      yield* lock.hold({ command: "kern run", wait: 0, report: () => Effect.void }).pipe(Scope.extend(first))
      assert.strictEqual(Option.getOrThrow(yield* lock.holder).command, "kern run")

      const lines = yield* Ref.make<ReadonlyArray<string>>([])
      const report = (line: string) => Ref.update(lines, (all) => [...all, line])
      const second = yield* Scope.make()
      const waiter = yield* Effect.fork(lock.hold({ command: "kern chat", wait: "60 seconds", report }).pipe(Scope.extend(second)))
      for (let i = 0; i < 5; i++) {
        yield* settle(waiter)
        yield* TestClock.adjust("10 seconds")
      }
      yield* settle(waiter)
      assert.isNull(waiter.unsafePoll())
      const waited = yield* Ref.get(lines)
      assert.lengthOf(waited, 1)
      assert.match(waited[0]!, new RegExp(`^waiting for the agent in .*: held by pid ${process.pid} \\(kern run\\) since `))

      yield* Scope.close(first, Exit.void)
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(waiter)
      assert.strictEqual(Option.getOrThrow(yield* lock.holder).command, "kern chat")
      yield* Scope.close(second, Exit.void)
      assert.isTrue(Option.isNone(yield* lock.holder))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a holder that stays past the wait: AgentBusy naming its pid and command, and the folder untouched", () =>
    Effect.gen(function*() {
      const lock = yield* lockOf
      yield* lock.hold({ command: "kern run", wait: 0, report: () => Effect.void })
      const waiter = yield* Effect.fork(Effect.scoped(lock.hold({ command: "kern chat", wait: "5 seconds", report: () => Effect.void })))
      for (let i = 0; i < 6; i++) {
        yield* settle(waiter)
        yield* TestClock.adjust("1 second")
      }
      const error = yield* Fiber.join(waiter).pipe(Effect.flip)
      assert.strictEqual(error._tag, "AgentBusy")
      if (error._tag === "AgentBusy") {
        assert.strictEqual(error.pid, process.pid)
        assert.include(error.message, `held by pid ${process.pid} (kern run)`)
        assert.include(error.message, "gave up after 5 s")
      }
      assert.strictEqual(Option.getOrThrow(yield* lock.holder).command, "kern run")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("among several runners: a lock another runner of the same cluster left on another machine is taken over under the cluster's hold; a plain kern start's, or another cluster's, is not", () =>
    Effect.gen(function*() {
      const cluster = { database: "postgres://kern@db:5432/kern#kern_cluster", runner: "10.0.0.5:34431" }
      const elsewhere = (holder: Record<string, unknown>) =>
        Effect.gen(function*() {
          const lock = yield* lockOf
          NodeFs.writeFileSync(lock.file, JSON.stringify({
            pid: process.pid,
            startedAt: new Date(0).toISOString(),
            host: "another-machine",
            command: "kern serve",
            address: "http://10.0.0.6:4000/agents/alpha",
            ...holder
          }))
          return lock
        })
      const hold = (lock: AgentLock.AgentLockShape, mine: typeof cluster | undefined) =>
        Effect.exit(lock.hold({
          command: "kern serve",
          wait: 0,
          report: () => Effect.void,
          whileAgentRuns: "stop it there",
          ...(mine === undefined ? {} : { cluster: mine })
        }))

      const killedRunner = yield* elsewhere({ cluster: { ...cluster, runner: "10.0.0.6:34431" } })
      assert.isTrue(Exit.isSuccess(yield* hold(killedRunner, cluster)))
      assert.deepStrictEqual(Option.getOrThrow(yield* killedRunner.holder).cluster, cluster)

      // Without a hold of this runner's cluster (plain kern serve), the other runner's lock stays.
      const notMine = yield* elsewhere({ cluster: { ...cluster, runner: "10.0.0.6:34431" } })
      assert.isTrue(Exit.isFailure(yield* hold(notMine, undefined)))
      // A plain kern start on another machine, and a runner of another cluster, are refused whatever the hold.
      const plain = yield* elsewhere({ command: "kern start" })
      assert.isTrue(Exit.isFailure(yield* hold(plain, cluster)))
      const otherCluster = yield* elsewhere({ cluster: { database: "postgres://kern@other:5432/kern#kern_cluster", runner: "10.0.0.6:34431" } })
      assert.isTrue(Exit.isFailure(yield* hold(otherCluster, cluster)))
      for (const lock of [notMine, plain, otherCluster]) assert.strictEqual(Option.getOrThrow(yield* lock.holder).host, "another-machine")
    }).pipe(Effect.provide(NodeContext.layer)))
})
