import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Effect, Layer } from "effect"
import { agentPaths } from "../../../src/config/paths.js"
import { ProcessEnv } from "../../../src/config/ProcessEnv.js"
import type { HostAgents } from "../../../src/host/HostAgents.js"
import * as WakeSources from "../../../src/host/wakeSources/wakeSources.js"
import * as Database from "../../../src/storage/Database.js"
import { operatorOrigin } from "../../../src/tools/Followups.js"
import type { ScheduleDraft } from "../../../src/tools/schedules/newSchedule.js"
import { defaultGraceMs } from "../../../src/tools/schedules/ScheduleRow.js"
import { ScheduleStore } from "../../../src/tools/schedules/ScheduleStore.js"

/** A one-shot due at `atMs`, as `kern schedule add --at` stores it. */
export const oneShot = (atMs: number, prompt: string): ScheduleDraft =>
  ({ kind: "at", cron: null, atMs, timezone: "UTC", prompt, misfire: "once", graceMs: defaultGraceMs, nextDueMs: atMs })

/** A recurring schedule whose next run is `nextDueMs`. */
export const recurring = (cron: string, nextDueMs: number, prompt: string): ScheduleDraft =>
  ({ kind: "cron", cron, atMs: null, timezone: "UTC", prompt, misfire: "skip", graceMs: defaultGraceMs, nextDueMs })

/** Schedules added to the folder's kern.db as the operator adds them (`kern schedule add`), kern.db closed after. */
export const addSchedules = (dir: string, drafts: ReadonlyArray<ScheduleDraft>) =>
  Effect.flatMap(ScheduleStore, (store) =>
    Effect.forEach(drafts, (draft) => store.add(draft, { origin: operatorOrigin, deliverTo: null, createdBy: "operator" }))).pipe(
      Effect.provide(ScheduleStore.Default.pipe(Layer.provide(Database.layer({ filename: agentPaths(dir).dbFile })))),
      Effect.asVoid
    )

/** The wake sources over a host, with the process environment `env`. */
export const wakeSourcesOver = (
  host: Layer.Layer<HostAgents>,
  env: Record<string, string> = {},
  options: Parameters<typeof WakeSources.layerWith>[0] = {}
) =>
  WakeSources.layerWith(options).pipe(
    Layer.provide(host),
    Layer.provide(Layer.succeed(ProcessEnv, env)),
    Layer.provide(NodeContext.layer),
    Layer.provide(NodeHttpClient.layerUndici)
  )
