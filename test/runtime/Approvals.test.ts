import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, PubSub, Queue, TestClock } from "effect"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import * as NodePath from "node:path"
import { Approvals, channelUser, layer as approvalsLayer, localOperator } from "../../src/runtime/Approvals.js"
import * as AgentConfig from "../../src/config/AgentConfig.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import type { ApprovalRequest } from "../../src/kernel/ApprovalGate.js"
import { EventLog, layerSql as eventLogSql } from "../../src/kernel/EventLog.js"
import { PairingStore } from "../../src/users/PairingStore.js"
import { databases, type TestDatabase } from "../support/databases.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const dir = NodePath.join(makeTempDir(), "agent")
writeFiles(dir, { ".kern/config.json": JSON.stringify({ approvalMode: "ask", approvalTimeout: 120 }) })

const config = AgentConfig.layer(dir).pipe(Layer.provide(Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, {}))))
const servicesOn = (database: TestDatabase["layer"]) => {
  const below = Layer.mergeAll(PairingStore.Default, eventLogSql.pipe(Layer.provide(KnownSecrets.layerNone))).pipe(Layer.provideMerge(database))
  return approvalsLayer.pipe(Layer.provideMerge(Layer.merge(below, config)), Layer.orDie)
}

const bashSpec = {
  toolId: "bash",
  name: "Bash",
  description: "",
  safetyClass: "DESTRUCTIVE",
  idempotent: false,
  timeoutMs: 1000,
  sideEffectLevel: "local_write",
  riskTags: ["scope:full"]
} as unknown as ApprovalRequest["spec"]

const requestFrom = (origin: ApprovalRequest["origin"], args: unknown = { command: "rm -rf build" }): ApprovalRequest => ({
  spec: bashSpec,
  args,
  reason: "bash is DESTRUCTIVE",
  runId: "run_1",
  agentName: "agent",
  userSid: origin?.userId ?? "",
  traceId: "t",
  sessionId: "s",
  origin
})

const telegram = (userId: string) => ({ interface: "telegram", channel: userId, userId })

/** Starts an ask and returns it with the pending approval it published. */
const asking = (request: ApprovalRequest) =>
  Effect.gen(function*() {
    const approvals = yield* Approvals
    const requests = yield* PubSub.subscribe(approvals.requests)
    const fiber = yield* Effect.fork(approvals.ask(request))
    const pending = yield* Queue.take(requests)
    return { fiber, pending }
  })

describe.each(databases)("Approvals on $dialect", ({ layer }) => {
  const services = servicesOn(layer)

  it.scoped("the operator's yes approves; the request carries the full arguments and where the turn came from", () =>
    Effect.gen(function*() {
      const approvals = yield* Approvals
      const { fiber, pending } = yield* asking(requestFrom(telegram("42"), { command: "rm -rf build", note: "x".repeat(5000) }))
      expect(pending.toolId).toBe("bash")
      expect((pending.args as { note: string }).note).toHaveLength(5000)
      expect(pending.origin).toMatchObject({ interface: "telegram", channel: "42", userId: "42" })
      expect(pending.expiresAtMs - pending.requestedAtMs).toBe(120_000)
      expect((yield* approvals.pending).map((p) => p.id)).toEqual([pending.id])
      const resolution = yield* approvals.decide(pending.id, true, localOperator("terminal"))
      expect(resolution).toMatchObject({ approved: true, outcome: "approved", by: "operator" })
      expect(yield* Fiber.join(fiber)).toMatchObject({ approved: true, by: "operator" })
      expect(yield* approvals.pending).toEqual([])
      // Answering again finds nothing.
      const again = yield* Effect.flip(approvals.decide(pending.id, false, localOperator("terminal")))
      expect(again.reason).toBe("unknown_id")
    }).pipe(Effect.provide(services)))

  it.scoped("nobody answering for approvalTimeout is a no, recorded as a timeout (TestClock)", () =>
    Effect.gen(function*() {
      const approvals = yield* Approvals
      const resolved = yield* PubSub.subscribe(approvals.resolved)
      const { fiber } = yield* asking(requestFrom({ interface: "web", channel: "web", userId: "operator" }))
      yield* TestClock.adjust("119 seconds")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 second")
      const decision = yield* Fiber.join(fiber)
      expect(decision).toMatchObject({ approved: false, by: "timeout" })
      expect(decision.reason).toContain("120 s")
      expect(yield* Queue.take(resolved)).toMatchObject({ outcome: "timeout", approved: false })
      const log = yield* EventLog
      const [event] = (yield* log.recent(10)).filter((e) => e.decisionKey === "kernel.tool.approval")
      expect(event).toMatchObject({ status: "timeout", toolId: "bash", runId: "run_1" })
      expect(JSON.parse(event!.detail ?? "{}")).toMatchObject({ by: "timeout", atMs: 120_000 })
    }).pipe(Effect.provide(services)))

  it.scoped("only an operator may answer from a chat: a paired user, a stranger and an unknown id are refused", () =>
    Effect.gen(function*() {
      const approvals = yield* Approvals
      const pairings = yield* PairingStore
      const user = yield* pairings.request({ interface: "telegram", userId: "7", chatId: "7" })
      yield* pairings.approve(user.code, "operator")
      const boss = yield* pairings.request({ interface: "telegram", userId: "1", chatId: "1" })
      yield* pairings.approve(boss.code, "operator")
      yield* pairings.promote("telegram:1")
      const { fiber, pending } = yield* asking(requestFrom(telegram("7")))
      for (const who of [channelUser("telegram", "7"), channelUser("telegram", "999"), channelUser("slack", "1")]) {
        const refused = yield* Effect.flip(approvals.decide(pending.id, true, who))
        expect(refused.reason).toBe("not_operator")
      }
      expect(fiber.unsafePoll()).toBeNull()
      const decided = yield* approvals.decide(pending.id, false, channelUser("telegram", "1"))
      expect(decided).toMatchObject({ approved: false, outcome: "denied", by: "telegram:1" })
      expect(yield* Fiber.join(fiber)).toMatchObject({ approved: false, by: "telegram:1" })
      expect((yield* Effect.flip(approvals.decide("apr_nope", true, localOperator("cli")))).reason).toBe("unknown_id")
    }).pipe(Effect.provide(services)))

  it.scoped("a heartbeat turn has nobody to ask: denied at once, nothing published", () =>
    Effect.gen(function*() {
      const approvals = yield* Approvals
      const requests = yield* PubSub.subscribe(approvals.requests)
      const decision = yield* approvals.ask(requestFrom({ interface: "heartbeat", channel: "heartbeat", userId: "system" }))
      expect(decision).toMatchObject({ approved: false, by: "policy:deny" })
      expect(yield* Queue.size(requests)).toBe(0)
    }).pipe(Effect.provide(services)))

  it.scoped("a turn interrupted while it waits leaves nothing pending", () =>
    Effect.gen(function*() {
      const approvals = yield* Approvals
      const { fiber } = yield* asking(requestFrom(telegram("42")))
      yield* Fiber.interrupt(fiber)
      expect(yield* approvals.pending).toEqual([])
    }).pipe(Effect.provide(services)))
})
