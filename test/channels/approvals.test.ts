import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schedule } from "effect"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import * as EventLog from "../../src/kernel/EventLog.js"
import * as Database from "../../src/storage/Database.js"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { FakeReply } from "../support/fakeModelServer.js"
import { toolResultsById } from "../support/modelRequests.js"
import { bearer, request, startServer } from "./web/harness.js"

const json = { ...bearer, "content-type": "application/json" }

interface Pending {
  readonly id: string
  readonly toolId: string
  readonly args: unknown
  readonly interface: string
}

/** Waits until the running agent holds `count` approvals. */
const awaitApprovals = (base: string, count: number) =>
  request(`${base}/approvals`, { headers: bearer }).pipe(
    Effect.map((answer) => (answer.json as { readonly approvals: ReadonlyArray<Pending> }).approvals),
    Effect.filterOrFail((approvals) => approvals.length >= count),
    Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("20 seconds")))
  )

const bashCall = (marker: string) => FakeReply.toolCalls([{ id: "c1", name: "bash", args: { command: `touch ${marker} && echo made` } }])

describe("approvals (approvalMode ask)", () => {
  it.live("a destructive call waits with its full arguments; approved over HTTP it runs, and the decision is audited", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, model, dir } = yield* startServer({ config: { approvalMode: "ask", recall: false } })
      const marker = NodePath.join(dir, "approved-marker")
      yield* model.reply(bashCall(marker), FakeReply.text("done"))
      yield* request(`${base}/message`, { method: "POST", headers: json, body: JSON.stringify({ text: "make the marker" }) })
      const [pending] = yield* awaitApprovals(base, 1)
      expect(pending).toMatchObject({ toolId: "bash", args: { command: `touch ${marker} && echo made` }, interface: "web" })
      // Nothing ran while it waits.
      expect(NodeFs.existsSync(marker)).toBe(false)
      const status = yield* request(`${base}/status`, { headers: bearer })
      expect((status.json as { runtime: { approvals: number } }).runtime.approvals).toBe(1)

      const answer = yield* request(`${base}/approvals/${pending!.id}`, { method: "POST", headers: json, body: "{\"approved\":true}" })
      expect(answer.status).toBe(200)
      expect(answer.json).toMatchObject({ id: pending!.id, approved: true, outcome: "approved", by: "operator" })
      const [, second] = yield* model.awaitRequests(2)
      expect(NodeFs.existsSync(marker)).toBe(true)
      expect(Object.values(toolResultsById(second!.body)).join("\n")).toContain("made")
      // Answered once: a second answer finds nothing waiting.
      const again = yield* request(`${base}/approvals/${pending!.id}`, { method: "POST", headers: json, body: "{\"approved\":false}" })
      expect(again.status).toBe(404)
      const left = yield* request(`${base}/approvals`, { headers: bearer })
      expect(left.json).toEqual({ approvals: [] })
      // The decision, who made it and when, in the EventLog next to the call it let through.
      const events = yield* Effect.flatMap(EventLog.EventLog, (log) => log.recent(50)).pipe(
        Effect.provide(EventLog.layerSql.pipe(Layer.provide(KnownSecrets.layerNone)).pipe(Layer.provide(Database.layer({ filename: NodePath.join(dir, ".kern", "kern.db") })))),
        Effect.orDie
      )
      const decision = events.find((event) => event.decisionKey === "kernel.tool.approval")
      expect(decision).toMatchObject({ toolId: "bash", status: "approved" })
      expect(JSON.parse(decision!.detail ?? "{}")).toMatchObject({ approvalId: pending!.id, by: "operator", atMs: expect.any(Number) })
      const call = events.find((event) => event.decisionKey === "kernel.tool.dispatch" && event.toolId === "bash")
      expect(call).toMatchObject({ status: "ok", runId: decision!.runId })
      expect(JSON.parse(call!.detail ?? "{}")).toMatchObject({ approvedBy: "operator" })
    })))

  it.live("denied, the call does not run and the model reads why; bad answers are 400/404", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, model, dir } = yield* startServer({ config: { approvalMode: "ask", recall: false } })
      const marker = NodePath.join(dir, "denied-marker")
      yield* model.reply(bashCall(marker), FakeReply.text("ok, not done"))
      yield* request(`${base}/message`, { method: "POST", headers: json, body: JSON.stringify({ text: "make the marker" }) })
      const [pending] = yield* awaitApprovals(base, 1)
      const bad = yield* request(`${base}/approvals/${pending!.id}`, { method: "POST", headers: json, body: "{\"approved\":\"yes\"}" })
      expect(bad.status).toBe(400)
      const unknown = yield* request(`${base}/approvals/apr_00000000`, { method: "POST", headers: json, body: "{\"approved\":true}" })
      expect(unknown.status).toBe(404)
      const unauthenticated = yield* request(`${base}/approvals/${pending!.id}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{\"approved\":true}"
      })
      expect(unauthenticated.status).toBe(401)
      const answer = yield* request(`${base}/approvals/${pending!.id}`, { method: "POST", headers: json, body: "{\"approved\":false}" })
      expect(answer.json).toMatchObject({ approved: false, outcome: "denied", by: "operator" })
      const [, second] = yield* model.awaitRequests(2)
      expect(NodeFs.existsSync(marker)).toBe(false)
      const results = Object.values(toolResultsById(second!.body)).join("\n")
      expect(results).toContain("PERMISSION_DENIED")
      expect(results).toContain("denied by operator")
    })))
})
