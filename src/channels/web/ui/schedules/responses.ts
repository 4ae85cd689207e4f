// The Schedules view's decoders of GET /schedules and POST /schedules: plain functions, typed by api.ts's ScheduleView,
// so that a change of the wire breaks the build and a test runs them on answers encoded with KernApi's schemas.
import type { HeartbeatView, ScheduleView } from "../../api.js"
import { arr, isObject, type Json, type JsonObject, num, obj, str } from "../wire.js"

export type Schedule = typeof ScheduleView.Type
export type Heartbeat = typeof HeartbeatView.Type

/** GET /schedules as the view shows it: the schedules that decode, and the heartbeat (null when it is off). */
export interface Schedules {
  readonly schedules: ReadonlyArray<Schedule>
  readonly heartbeat: Heartbeat | null
}

const kinds: ReadonlyArray<Schedule["kind"]> = ["at", "cron"]
const misfires: ReadonlyArray<Schedule["misfire"]> = ["skip", "once", "all"]

const oneOf = <A extends string>(values: ReadonlyArray<A>, v: string | undefined): A | undefined => values.find((x) => x === v)

/** A string or null; undefined when it is neither (a field missing or of another type). */
const nullable = <A>(o: JsonObject, key: string, read: (o: JsonObject, key: string) => A | undefined): A | null | undefined =>
  o[key] === null ? null : read(o, key)

/** One schedule; undefined when any field is missing or of the wrong type (it is then left out, never guessed). */
export const decodeSchedule = (u: Json | undefined): Schedule | undefined => {
  if (!isObject(u)) return undefined
  const id = num(u, "id")
  const kind = oneOf(kinds, str(u, "kind"))
  const when = str(u, "when")
  const timezone = str(u, "timezone")
  const prompt = str(u, "prompt")
  const misfire = oneOf(misfires, str(u, "misfire"))
  const deliverTo = nullable(u, "deliverTo", str)
  const createdBy = str(u, "createdBy")
  const next = nullable(u, "next", str)
  const nextDueMs = nullable(u, "nextDueMs", num)
  const fired = num(u, "fired")
  const missed = num(u, "missed")
  const lastFired = nullable(u, "lastFired", str)
  const lastMissed = nullable(u, "lastMissed", str)
  if (
    id === undefined || kind === undefined || when === undefined || timezone === undefined || prompt === undefined ||
    misfire === undefined || deliverTo === undefined || createdBy === undefined || next === undefined ||
    nextDueMs === undefined || fired === undefined || missed === undefined || lastFired === undefined || lastMissed === undefined
  ) return undefined
  return { id, kind, when, timezone, prompt, misfire, deliverTo, createdBy, next, nextDueMs, fired, missed, lastFired, lastMissed }
}

/** The heartbeat's entry; undefined when a field is missing or of the wrong type. */
export const decodeHeartbeat = (u: Json | undefined): Heartbeat | undefined => {
  if (!isObject(u) || u["id"] !== 0 || u["kind"] !== "heartbeat") return undefined
  const when = str(u, "when")
  const timezone = str(u, "timezone")
  const prompt = str(u, "prompt")
  const next = nullable(u, "next", str)
  const nextDueMs = nullable(u, "nextDueMs", num)
  const note = str(u, "note")
  if (when === undefined || timezone === undefined || prompt === undefined || next === undefined || nextDueMs === undefined || note === undefined) {
    return undefined
  }
  return { id: 0, kind: "heartbeat", when, timezone, prompt, next, nextDueMs, note }
}

/** GET /schedules: `{ schedules, heartbeat }`, each schedule that decodes; a heartbeat that does not decode is left out. */
export const decodeSchedules = (u: Json | undefined): Schedules | undefined => {
  if (!isObject(u) || !Array.isArray(u["schedules"])) return undefined
  const schedules = arr(u, "schedules").flatMap((s) => {
    const schedule = decodeSchedule(s)
    return schedule === undefined ? [] : [schedule]
  })
  return { schedules, heartbeat: decodeHeartbeat(u["heartbeat"]) ?? null }
}

/** POST /schedules's 201: `{ schedule }`. */
export const decodeAdded = (u: Json | undefined): Schedule | undefined => isObject(u) ? decodeSchedule(obj(u, "schedule")) : undefined
