import * as NodeContext from "@effect/platform-node/NodeContext"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Logger, Ref, Schema, Scope } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Layers from "../../src/runtime/layers.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { Envelope, SessionHeader, SessionLine, UserMessage } from "../../src/session/messages.js"
import { agentDatabaseConfig, databases } from "../support/databases.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

// An agent from before conversations per person kept everybody's messages in its one session: after the upgrade that
// session stays the operator's, untouched, and the log says once that other people's messages are in it.

const encodeLine = Schema.encodeSync(Schema.parseJson(SessionLine))
const at = "2026-11-20T10:00:00.000Z"
const from = (iface: string, channel: string, userId: string, text: string) =>
  new UserMessage({ text, at, envelope: new Envelope({ interface: iface, channel, userId, time: "2026-11-20T11:00:00.000+01:00" }) })

const oldAgent = (config: Record<string, unknown> = {}) => {
  const onPostgres = config["database"] !== undefined
  const dir = NodePath.join(makeTempDir(), "agent")
  const id = "20261120-100000-000-abcd"
  const lines = [
    new SessionHeader({ version: 1, id, createdAt: at, agent: "agent" }),
    from("cli", "terminal", "operator", "my bank PIN is 4711"),
    from("telegram", "42", "42", "hello from a friend"),
    from("telegram", "-1001", "42", "hello from a group"),
    from("slack", "DOPS", "operator", "the operator's own")
  ]
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({ model: "m", heartbeatInterval: 0, autoCommit: false, recall: false, ...config }),
    [`.kern/sessions/${id}.jsonl`]: lines.map((line) => `${encodeLine(line)}\n`).join(""),
    // An old agent has its database (migrated at the start); on PostgreSQL, its schema (made at the start).
    ...(onPostgres ? {} : { ".kern/kern.db": "" })
  })
  return { dir, id }
}

/**
 * Starts the agent's runtime on `dir` and stops it once the notice was decided (kern.db's `notices`); returns the
 * notice's lines among what it logged.
 */
const startOnce = (dir: string) =>
  Effect.gen(function*() {
    const logged = yield* Ref.make<ReadonlyArray<string>>([])
    const logger = Logger.make(({ message }) => {
      const text = Array.isArray(message) ? message.join(" ") : String(message)
      Effect.runSync(Ref.update(logged, (all) => [...all, text]))
    })
    const layer = Layers.runningAgentCoreLayer(dir, { command: "kern test", waitSeconds: 10 }).pipe(
      Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })),
      Layer.provide(NodeContext.layer)
    )
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(layer, scope).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
    const sql = Context.get(context, SqlClient.SqlClient)
    while ((yield* sql`SELECT 1 AS found FROM notices`).length === 0) yield* Effect.sleep("20 millis")
    yield* Scope.close(scope, Exit.void)
    return (yield* Ref.get(logged)).filter((line) => line.includes("conversations are now per person"))
  })

describe.each(databases)("an agent from before conversations per person, on $dialect", (database) => {
  it.scopedLive("keeps its session as the operator's, untouched, and says once how many others' messages are in it", () =>
    Effect.gen(function*() {
      const { dir, id } = oldAgent(yield* agentDatabaseConfig(database))
      const file = NodePath.join(dir, ".kern/sessions", `${id}.jsonl`)
      const before = NodeFs.readFileSync(file, "utf8")
      const first = yield* startOnce(dir)
      expect(first).toHaveLength(1)
      expect(first[0]).toContain("keeps 2 earlier messages from other people")
      expect(NodeFs.readFileSync(file, "utf8")).toBe(before)
      expect(NodeFs.readdirSync(NodePath.join(dir, ".kern/sessions"))).toEqual([`${id}.jsonl`])
      expect(yield* startOnce(dir)).toEqual([])
      // On PostgreSQL the notice is in the agent's schema: no kern.db file is made beside the sessions.
      expect(NodeFs.existsSync(NodePath.join(dir, ".kern/kern.db"))).toBe(database.dialect === "sqlite")
    }), 60_000)
})
