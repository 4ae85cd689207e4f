import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { PairingStore } from "../../../src/users/PairingStore.js"
import * as Database from "../../../src/storage/Database.js"
import { Layer } from "effect"
import * as NodePath from "node:path"
import { bearer, startServer } from "./harness.js"

// GET, POST and DELETE /schedules: the operator's, through the API's one router and guard.

describe("/schedules", () => {
  it.live("the operator adds, lists and removes; bad input is a 400 naming the field; no token, no schedules", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, dir } = yield* startServer({ config: { recall: false, timezone: "UTC" } })
      yield* Effect.gen(function*() {
        const store = yield* PairingStore
        const bob = yield* store.request({ interface: "telegram", userId: "77", chatId: "9077", displayName: "Bob" })
        yield* store.approve(bob.code, "operator")
      }).pipe(Effect.provide(PairingStore.Default.pipe(Layer.provide(Database.layer({ filename: NodePath.join(dir, ".kern", "kern.db") })))), Effect.orDie)
      const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = bearer) =>
        Effect.promise(async () => {
          const response = await fetch(`${base}${path}`, {
            method,
            headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
            ...(body === undefined ? {} : { body: JSON.stringify(body) })
          })
          return { status: response.status, json: await response.json() as Record<string, unknown> }
        })

      const added = yield* call("POST", "/schedules", { prompt: "brief Bob", cron: "30 7 * * 1-5", deliverTo: "telegram:77" })
      expect(added.status).toBe(201)
      expect(added.json["schedule"]).toMatchObject({ id: 1, kind: "cron", when: "30 7 * * 1-5", misfire: "skip", deliverTo: "telegram:77", createdBy: "operator" })
      const oneShot = yield* call("POST", "/schedules", { prompt: "once", at: "in 2 days at 10:00" })
      expect(oneShot.status).toBe(201)

      const listed = yield* call("GET", "/schedules")
      expect(listed.status).toBe(200)
      expect((listed.json["schedules"] as ReadonlyArray<{ id: number }>).map((s) => s.id)).toEqual([1, 2])

      const unreadable = yield* call("POST", "/schedules", { prompt: "x", at: "someday" })
      expect(unreadable).toMatchObject({ status: 400, json: { field: "at" } })
      expect(String(unreadable.json["error"])).toContain("not a time kern reads")
      const stranger = yield* call("POST", "/schedules", { prompt: "x", at: "in 1 hour", deliverTo: "telegram:5" })
      expect(stranger).toMatchObject({ status: 400, json: { field: "deliverTo" } })

      expect(yield* call("DELETE", "/schedules/1")).toEqual({ status: 200, json: { removed: 1 } })
      expect((yield* call("DELETE", "/schedules/1")).status).toBe(404)
      expect((yield* call("GET", "/schedules", undefined, {})).status).toBe(401)
      expect((yield* call("POST", "/schedules", { prompt: "x", at: "in 1 hour" }, {})).status).toBe(401)
      expect(((yield* call("GET", "/schedules")).json["schedules"] as ReadonlyArray<{ id: number }>).map((s) => s.id)).toEqual([2])
      // The heartbeat is off in this agent (heartbeatInterval 0): none is listed, and 0 is still not a schedule to remove.
      expect((yield* call("GET", "/schedules")).json["heartbeat"]).toBeNull()
      expect(yield* call("DELETE", "/schedules/0")).toMatchObject({ status: 400, json: { field: "id" } })
    })), 120_000)

  it.live("the heartbeat is listed beside the schedules as schedule 0, and is not removed like one", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base } = yield* startServer({ config: { recall: false, timezone: "Europe/Berlin", heartbeatInterval: 45, activeHours: "08:00-22:00" } })
      const call = (method: string, path: string) =>
        Effect.promise(async () => {
          const response = await fetch(`${base}${path}`, { method, headers: bearer })
          return { status: response.status, json: await response.json() as Record<string, unknown> }
        })
      const listed = yield* call("GET", "/schedules")
      expect(listed.json).toMatchObject({
        schedules: [],
        heartbeat: { id: 0, kind: "heartbeat", when: "every 45 min within 08:00-22:00", timezone: "Europe/Berlin" }
      })
      const removed = yield* call("DELETE", "/schedules/0")
      expect(removed).toMatchObject({ status: 400, json: { field: "id" } })
      expect(String(removed.json["error"])).toContain("heartbeatInterval: 0")
      expect((yield* call("GET", "/schedules")).json["heartbeat"]).toMatchObject({ id: 0 })
    })), 120_000)
})
