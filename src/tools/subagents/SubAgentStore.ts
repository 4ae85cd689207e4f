import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import { MemoryReach, ToolScope } from "../../config/schema.js"
import { subagentInterface } from "../../kernel/Audience.js"
import { dialectOf, jsonNumber, jsonObject } from "../../storage/sqlDialect.js"

/** A sub-agent's state: `running` until its turn ends; a restart reports the running ones as interrupted. */
export const SubAgentState = Schema.Literal("running", "done", "failed", "cancelled", "interrupted")
export type SubAgentState = typeof SubAgentState.Type

/** The part of its parent turn's budget a sub-agent was given: its whole budget. */
export const SubAgentBudget = Schema.Struct({
  maxToolCalls: Schema.Int.pipe(Schema.nonNegative()),
  maxPromptTokens: Schema.Int.pipe(Schema.nonNegative()),
  maxCostUsdCents: Schema.Number.pipe(Schema.nonNegative()),
  maxLatencyMs: Schema.Number.pipe(Schema.nonNegative())
})
export type SubAgentBudget = typeof SubAgentBudget.Type

/** The parent turn's audience (Audience.ts) as stored: whose conversation the sub-agent works for. */
const StoredAudience = Schema.Struct({
  conversationId: Schema.String,
  interface: Schema.String,
  channel: Schema.String,
  userId: Schema.String,
  name: Schema.optional(Schema.String),
  memory: MemoryReach
})

/** What a sub-agent has used of its budget, over its turns. */
export const SubAgentUsage = Schema.Struct({
  toolCalls: Schema.Number,
  promptTokens: Schema.Number,
  costUsdCents: Schema.Number
})
export type SubAgentUsage = typeof SubAgentUsage.Type

export const noSubAgentUsage: SubAgentUsage = { toolCalls: 0, promptTokens: 0, costUsdCents: 0 }

/** Where a run's message came from (RunOrigin): whom a sub-agent's approvals are asked of. */
const StoredOrigin = Schema.Struct({ interface: Schema.String, channel: Schema.String, userId: Schema.String })

export const RunScope = Schema.Literal(...ToolScope.literals, "none")

/** A sub-agent: its task, whom it reports to, the terms it runs under and how it ended. */
export class SubAgent extends Schema.Class<SubAgent>("SubAgent")({
  id: Schema.Number,
  task: Schema.String,
  parentInterface: Schema.String,
  parentChannel: Schema.String,
  parentUserId: Schema.String,
  parentSessionId: Schema.String,
  /** The person of the parent turn: whom an approval its calls need is asked of. */
  approver: Schema.parseJson(StoredOrigin),
  depth: Schema.Number,
  /** The tool ids it may call: no more than its parent turn was offered. */
  tools: Schema.parseJson(Schema.Array(Schema.String)),
  /** Its user's scope (a paired user's); null: the operator's, whatever is registered. */
  toolScope: Schema.NullOr(RunScope),
  audience: Schema.NullOr(Schema.parseJson(StoredAudience)),
  budget: Schema.parseJson(SubAgentBudget),
  used: Schema.parseJson(SubAgentUsage),
  state: SubAgentState,
  /** Its answer, or why it ended without one. */
  outcome: Schema.NullOr(Schema.String),
  createdAtMs: Schema.Number,
  endedAtMs: Schema.NullOr(Schema.Number)
}) {}

export type NewSubAgent = Omit<typeof SubAgent.Type, "id" | "state" | "outcome" | "createdAtMs" | "endedAtMs" | "used">

export class SubAgentStoreError extends Schema.TaggedError<SubAgentStoreError>()("SubAgentStoreError", {
  message: Schema.String
}) {}

const failed = (what: string) => (error: { readonly message: string }) =>
  new SubAgentStoreError({ message: `could not ${what} kern.db's subagents: ${error.message}` })

const encodeRow = Schema.encode(SubAgent)

/** The sub-agents in kern.db (`subagents`): what spawn starts, the turn runner's terms for their turns, their end. */
export class SubAgentStore extends Effect.Service<SubAgentStore>()("kern/tools/SubAgentStore", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const one = SqlSchema.findOne({ Request: Schema.Number, Result: SubAgent, execute: (id) => sql`SELECT * FROM subagents WHERE id = ${id}` })
    const inState = SqlSchema.findAll({
      Request: SubAgentState,
      Result: SubAgent,
      execute: (state) => sql`SELECT * FROM subagents WHERE state = ${state} ORDER BY id`
    })
    const recent = SqlSchema.findAll({
      Request: Schema.Number,
      Result: SubAgent,
      execute: (limit) => sql`SELECT * FROM subagents ORDER BY id DESC LIMIT ${limit}`
    })
    const Ids = Schema.Array(Schema.Struct({ id: Schema.Number }))

    const create = (fields: NewSubAgent) =>
      Effect.gen(function*() {
        const createdAtMs = yield* Clock.currentTimeMillis
        const encoded = yield* encodeRow(new SubAgent({ ...fields, id: 0, used: noSubAgentUsage, state: "running", outcome: null, createdAtMs, endedAtMs: null }))
        const { id: _id, ...row } = encoded
        const inserted = yield* sql`INSERT INTO subagents ${sql.insert(row)} RETURNING id`.pipe(Effect.flatMap(Schema.decodeUnknown(Ids)))
        const id = inserted[0]?.id
        if (id === undefined) return yield* new SubAgentStoreError({ message: "kern.db's subagents returned no id" })
        return new SubAgent({ ...fields, id, used: noSubAgentUsage, state: "running", outcome: null, createdAtMs, endedAtMs: null })
      }).pipe(Effect.mapError(failed("write")), Effect.withSpan("kern.subagents.create"))

    /**
     * Ends a running sub-agent: true when this call ended it, false when it had ended already (or never existed).
     * One statement, so of two enders (its turn's end, a cancel, a restart) exactly one wins.
     */
    const end = (id: number, state: Exclude<SubAgentState, "running">, outcome: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const rows = yield* sql`UPDATE subagents SET state = ${state}, outcome = ${outcome}, ended_at_ms = ${now}
          WHERE id = ${id} AND state = 'running' RETURNING id`
        return rows.length > 0
      }).pipe(Effect.mapError(failed("write")), Effect.withSpan("kern.subagents.end", { attributes: { id, state } }))

    /** Adds one turn's spend to what the sub-agent used, in one statement (two turns' spends never overwrite each other). */
    const addUsage = (id: number, spent: SubAgentUsage) => {
      const plus = (field: keyof SubAgentUsage) => sql`${sql.literal(jsonNumber(dialectOf(sql), "used", [field]))} + ${spent[field]}`
      const used = jsonObject(sql, [["toolCalls", plus("toolCalls")], ["promptTokens", plus("promptTokens")], ["costUsdCents", plus("costUsdCents")]])
      return sql`UPDATE subagents SET used = ${used} WHERE id = ${id}`.pipe(
        Effect.asVoid,
        Effect.mapError(failed("write")),
        Effect.withSpan("kern.subagents.addUsage")
      )
    }

    const Count = Schema.Array(Schema.Struct({ n: Schema.Number }))
    /** How many sub-agents a sub-agent spawned are running (its own reports are still to come). */
    const runningChildren = (id: number) =>
      sql`SELECT count(*) AS n FROM subagents WHERE state = 'running' AND parent_interface = ${subagentInterface}
        AND parent_channel = ${String(id)}`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Count)),
        Effect.map((rows) => rows[0]?.n ?? 0),
        Effect.mapError(failed("read"))
      )

    /** How many of a sub-agent's own sub-agents have ended with a report to it (a cancelled one reports nothing). */
    const reportedChildren = (id: number) =>
      sql`SELECT count(*) AS n FROM subagents WHERE state IN ('done', 'failed', 'interrupted')
        AND parent_interface = ${subagentInterface} AND parent_channel = ${String(id)}`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Count)),
        Effect.map((rows) => rows[0]?.n ?? 0),
        Effect.mapError(failed("read"))
      )

    return {
      create,
      addUsage,
      runningChildren,
      reportedChildren,
      end,
      get: (id: number) => one(id).pipe(Effect.mapError(failed("read"))),
      running: inState("running").pipe(Effect.mapError(failed("read"))),
      recent: (limit: number) => recent(limit).pipe(Effect.mapError(failed("read")))
    } as const
  })
}) {}

