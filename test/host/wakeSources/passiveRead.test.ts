import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as NodeFs from "node:fs"
import { agentPaths } from "../../../src/config/paths.js"
import { ProcessEnv } from "../../../src/config/ProcessEnv.js"
import { readPassive } from "../../../src/host/wakeSources/passiveRead.js"
import { operatorOrigin } from "../../../src/tools/Followups.js"
import { ScheduleStore } from "../../../src/tools/schedules/ScheduleStore.js"
import { agentDatabaseConfig, agentSql, databases } from "../../support/databases.js"
import { testAgentDir } from "../../support/testAgentDir.js"
import { oneShot } from "./seed.js"

// What a passive hosted agent's folder says while it sleeps, read where its kern.db is: the file, or its schema on
// PostgreSQL (where a schedule added beside the host changes no file of the folder).

const read = (dir: string) => readPassive(dir).pipe(Effect.provide(Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, {}))))

describe.each(databases)("a passive agent's record, its kern.db on $dialect", (database) => {
  it.scoped("nothing stored is nothing due; a schedule added by another process is its due time", () =>
    Effect.gen(function*() {
      const dir = testAgentDir(yield* agentDatabaseConfig(database))
      const empty = yield* read(dir)
      expect(empty.dueMs).toEqual(Option.none())
      expect(empty.onServer).toBe(database.dialect === "postgres")

      const atMs = Date.UTC(2031, 0, 1, 9)
      yield* Effect.flatMap(ScheduleStore, (store) =>
        store.add(oneShot(atMs, "water the plants"), { origin: operatorOrigin, deliverTo: null, createdBy: "operator" })).pipe(
          Effect.provide(ScheduleStore.Default.pipe(Layer.provide(agentSql(dir))))
        )
      const due = yield* read(dir)
      expect(due.dueMs).toEqual(Option.some(atMs))
      expect(due.why).toBe("a schedule is due")
      // On PostgreSQL nothing was written in the folder: no kern.db file appears.
      expect(NodeFs.existsSync(agentPaths(dir).dbFile)).toBe(database.dialect === "sqlite")
    }))
})
