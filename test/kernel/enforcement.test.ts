import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Layer, Ref, Schema } from "effect"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import type { ContractEnforcement } from "../../src/config/schema.js"
import * as ApprovalGate from "../../src/kernel/ApprovalGate.js"
import * as ContractBaselineStore from "../../src/kernel/ContractBaselineStore.js"
import * as EventLog from "../../src/kernel/EventLog.js"
import { RunContext } from "../../src/kernel/RunContext.js"
import { ToolExecutor } from "../../src/kernel/ToolExecutor.js"
import { ToolRegistry } from "../../src/kernel/ToolRegistry.js"
import type { SqlClient } from "@effect/sql"
import type { DatabaseError } from "../../src/storage/Database.js"
import { databases, reopenable } from "../support/databases.js"
import { inRun, kernelLayer } from "./harness.js"

const kernelOver = (enforcement: ContractEnforcement, db: Layer.Layer<SqlClient.SqlClient, DatabaseError>) =>
  kernelLayer({
    enforcement,
    gate: ApprovalGate.allowAll(),
    eventLog: EventLog.layerSql.pipe(Layer.provide(KnownSecrets.layerNone)).pipe(Layer.provide(db)),
    baselines: ContractBaselineStore.layerSql.pipe(Layer.provide(db))
  }).pipe(Layer.provideMerge(db))

/** Registers a LOCAL_WRITE and a READ_ONLY tool, then changes both specs at runtime. */
const registerAndDrift = (runs: Ref.Ref<number>) =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const handler = () => Ref.update(runs, (n) => n + 1)
    yield* registry.register({ toolId: "notes.write", name: "Write", safetyClass: "LOCAL_WRITE" }, { parameters: Schema.Struct({}), handler })
    yield* registry.register({ toolId: "notes.read", name: "Read" }, { parameters: Schema.Struct({}), handler })
    yield* registry.replaceSpec({ toolId: "notes.write", name: "Write", safetyClass: "LOCAL_WRITE", description: "now also deletes" })
    yield* registry.replaceSpec({ toolId: "notes.read", name: "Read", description: "changed too" })
  })

const callBoth = Effect.gen(function*() {
  const executor = yield* ToolExecutor
  const [write, read, ctx] = yield* inRun(Effect.all([executor.execute("notes.write", {}), executor.execute("notes.read", {}), RunContext]))
  const events = yield* Effect.flatMap(EventLog.EventLog, (log) => log.byRun(ctx.runId))
  return { write, read, events }
})

describe.each(databases)("contract enforcement on $dialect", (database) => {
  const sqlKernel = (enforcement: ContractEnforcement) => kernelOver(enforcement, database.layer)

  it.effect("off: nothing is compared, the current fingerprint is logged, both run", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      yield* registerAndDrift(runs)
      const { events, read, write } = yield* callBoth
      assert.isTrue(write.success && read.success)
      assert.strictEqual(yield* Ref.get(runs), 2)
      assert.deepStrictEqual(events.map((e) => [e.contractStatus, e.contractMismatch, e.contractEnforcement]), [
        ["unchecked", false, "off"],
        ["unchecked", false, "off"]
      ])
      assert.notStrictEqual(events[0]?.contractFingerprint, events[0]?.registeredFingerprint)
    }).pipe(Effect.provide(sqlKernel("off"))))

  it.effect("observe: mismatches are logged, nothing is blocked", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      yield* registerAndDrift(runs)
      const { events, read, write } = yield* callBoth
      assert.isTrue(write.success && read.success)
      assert.deepStrictEqual(events.map((e) => [e.toolId, e.contractStatus, e.contractMismatch]), [
        ["notes.write", "changed_since_registration", true],
        ["notes.read", "changed_since_registration", true]
      ])
    }).pipe(Effect.provide(sqlKernel("observe"))))

  it.effect("observe: the baseline comparison runs beside the call, and every record carries it (run, waiting, refused)", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const store = yield* ContractBaselineStore.ContractBaselineStore
      const executor = yield* ToolExecutor
      yield* registry.register({ toolId: "notes.read", name: "Read" }, { parameters: Schema.Struct({}), handler: () => Effect.void })
      yield* store.snapshot("kernel", yield* registry.listAll, "test-operator")
      // Registered after the snapshot: new to the baseline. Its handler waits, so the call suspends mid-way.
      const release = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      yield* registry.register({ toolId: "notes.slow", name: "Slow" }, {
        parameters: Schema.Struct({}),
        handler: () => Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release))
      })
      const [approved, waiting, ctx] = yield* inRun(Effect.all([
        executor.execute("notes.read", {}),
        Effect.zipRight(
          Effect.fork(Effect.zipRight(Deferred.await(started), Deferred.succeed(release, undefined))),
          executor.execute("notes.slow", {})
        ),
        RunContext
      ]))
      assert.isTrue(approved.success && waiting.success)
      const refused = yield* inRun(Effect.zip(executor.execute("notes.slow", {}), RunContext), { toolScope: "none" })
      assert.strictEqual(refused[0].errorCode, "PERMISSION_DENIED")
      const log = yield* EventLog.EventLog
      const events = [...yield* log.byRun(ctx.runId), ...yield* log.byRun(refused[1].runId)]
      assert.deepStrictEqual(events.map((e) => [e.toolId, e.status, e.contractStatus, e.contractMismatch]), [
        ["notes.read", "ok", "match", false],
        ["notes.slow", "ok", "baseline_new", true],
        ["notes.slow", "denied", "baseline_new", true]
      ])
    }).pipe(Effect.provide(sqlKernel("observe"))))

  it.effect("enforce: a changed LOCAL_WRITE contract is denied before policy and budget; READ_ONLY is observed", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      yield* registerAndDrift(runs)
      const { events, read, write } = yield* callBoth
      assert.strictEqual(write.errorCode, "PERMISSION_DENIED")
      assert.include(write.errorMessage, "changed since it was registered")
      assert.isTrue(read.success)
      assert.strictEqual(yield* Ref.get(runs), 1)
      assert.deepStrictEqual(events.map((e) => [e.decisionKey, e.toolId, e.status]), [
        ["kernel.tool.policy.blocked", "notes.write", "denied"],
        ["kernel.tool.dispatch", "notes.read", "ok"]
      ])
    }).pipe(Effect.provide(sqlKernel("enforce"))))

  it.effect("enforce: with no baseline a high-risk tool is denied, naming the snapshot command; a new one until approved", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const store = yield* ContractBaselineStore.ContractBaselineStore
      const executor = yield* ToolExecutor
      const handler = () => Effect.void
      yield* registry.register({ toolId: "mail.send", name: "Send", safetyClass: "NETWORK", sideEffectLevel: "external_write" }, {
        parameters: Schema.Struct({}),
        handler
      })
      yield* registry.register({ toolId: "mail.list", name: "List" }, { parameters: Schema.Struct({}), handler })
      // No baseline taken yet: every contract is new (seed 002), so the write is denied; reads are observed.
      const fresh = yield* inRun(Effect.all([executor.execute("mail.send", {}), executor.execute("mail.list", {})]))
      assert.strictEqual(fresh[0].errorCode, "PERMISSION_DENIED")
      assert.include(fresh[0].errorMessage, "`kern runtime-guard snapshot`")
      assert.isTrue(fresh[1].success)
      yield* store.approve("kernel", (yield* registry.listAll).find((s) => s.toolId === "mail.list")!, "op")
      const before = yield* inRun(Effect.all([executor.execute("mail.send", {}), executor.execute("mail.list", {})]))
      assert.strictEqual(before[0].errorCode, "PERMISSION_DENIED")
      assert.include(before[0].errorMessage, "not approved yet")
      assert.isTrue(before[1].success, "read-only contracts are observed, not blocked")

      yield* store.snapshot("kernel", yield* registry.listAll, "test-operator")
      const after = yield* inRun(executor.execute("mail.send", {}))
      assert.isTrue(after.success)
    }).pipe(Effect.provide(sqlKernel("enforce"))))

  it.scoped("baselines survive a restart and report changed, new and missing tools", () =>
    Effect.gen(function*() {
      const file = yield* reopenable(database)
      const firstRun = Effect.gen(function*() {
        const registry = yield* ToolRegistry
        const store = yield* ContractBaselineStore.ContractBaselineStore
        for (const toolId of ["a.tool", "b.tool", "c.tool"]) {
          yield* registry.register({ toolId, name: toolId, safetyClass: "LOCAL_WRITE" }, { parameters: Schema.Struct({}), handler: () => Effect.void })
        }
        yield* store.snapshot("kernel", yield* registry.listAll, "alice")
      })
      yield* firstRun.pipe(Effect.provide(kernelOver("enforce", file)))

      const secondRun = Effect.gen(function*() {
        const registry = yield* ToolRegistry
        const store = yield* ContractBaselineStore.ContractBaselineStore
        const executor = yield* ToolExecutor
        yield* registry.register({ toolId: "a.tool", name: "a.tool", safetyClass: "LOCAL_WRITE" }, { parameters: Schema.Struct({}), handler: () => Effect.void })
        yield* registry.register({ toolId: "b.tool", name: "b.tool", safetyClass: "LOCAL_WRITE", description: "new text" }, {
          parameters: Schema.Struct({}),
          handler: () => Effect.void
        })
        yield* registry.register({ toolId: "d.tool", name: "d.tool", safetyClass: "LOCAL_WRITE" }, { parameters: Schema.Struct({}), handler: () => Effect.void })
        const mismatches = yield* store.mismatches("kernel", yield* registry.listAll)
        const results = yield* inRun(Effect.all(["a.tool", "b.tool"].map((id) => executor.execute(id, {}))))
        yield* store.approve("kernel", (yield* registry.listAll).find((s) => s.toolId === "b.tool")!, "bob")
        const approved = yield* inRun(executor.execute("b.tool", {}))
        return { mismatches, results, approved, baselines: yield* store.list("kernel") }
      })
      const { approved, baselines, mismatches, results } = yield* secondRun.pipe(Effect.provide(kernelOver("enforce", file)))
      assert.deepStrictEqual(mismatches.map((m) => [m.toolId, m.kind]), [["b.tool", "changed"], ["c.tool", "missing"], ["d.tool", "new"]])
      // What changed is read from the contract the baseline kept.
      assert.deepStrictEqual(mismatches[0]?.changed, ["description"])
      assert.isTrue(results[0]?.success)
      assert.strictEqual(results[1]?.errorCode, "PERMISSION_DENIED")
      assert.include(results[1]?.errorMessage, "changed from the approved baseline")
      assert.isTrue(approved.success)
      assert.deepStrictEqual(baselines.map((b) => [b.toolId, b.approvedBy]), [["a.tool", "alice"], ["b.tool", "bob"], ["c.tool", "alice"]])
    }))

  it.scoped("a baseline another process approves or changes is seen by the very next call (on SQLite the cache follows kern.db's change counter)", () =>
    Effect.gen(function*() {
      const file = yield* reopenable(database)
      // The operator's `kern runtime-guard`: kern.db opened by a connection of its own, as another process opens it.
      const operator = <A, E>(use: (store: ContractBaselineStore.ContractBaselineStore["Type"]) => Effect.Effect<A, E>) =>
        Effect.flatMap(ContractBaselineStore.ContractBaselineStore, use).pipe(
          Effect.provide(ContractBaselineStore.layerSql.pipe(Layer.provide(file)))
        )
      yield* Effect.gen(function*() {
        const registry = yield* ToolRegistry
        const executor = yield* ToolExecutor
        yield* registry.register({ toolId: "mail.send", name: "Send", safetyClass: "NETWORK" }, {
          parameters: Schema.Struct({}),
          handler: () => Effect.void
        })
        const send = (yield* registry.listAll).find((spec) => spec.toolId === "mail.send")!
        // Asked twice with nothing approved: the second answer comes from the cache, and is still a denial.
        for (let i = 0; i < 2; i++) {
          const denied = yield* inRun(executor.execute("mail.send", {}))
          assert.strictEqual(denied.errorCode, "PERMISSION_DENIED")
          assert.include(denied.errorMessage, "`kern runtime-guard snapshot`")
        }
        yield* operator((store) => store.snapshot("kernel", [send], "operator"))
        assert.isTrue((yield* inRun(executor.execute("mail.send", {}))).success, "the snapshot is seen by the next call")
        assert.isTrue((yield* inRun(executor.execute("mail.send", {}))).success)
        // The operator approves another contract for the tool (as after an older kern's snapshot): the next call is denied.
        yield* operator((store) => store.approve("kernel", { ...send, description: "an older contract" }, "operator"))
        const changed = yield* inRun(executor.execute("mail.send", {}))
        assert.strictEqual(changed.errorCode, "PERMISSION_DENIED")
        assert.include(changed.errorMessage, "changed from the approved baseline (description)")
      }).pipe(Effect.provide(kernelOver("enforce", file)))
    }))
})
