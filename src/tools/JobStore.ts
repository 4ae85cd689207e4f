import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { toolFailure } from "../kernel/ToolFailure.js"

/** `running` until it ends; `interrupted`: the agent stopped or died while it ran (found so at the next start). */
export const JobState = Schema.Literal("running", "finished", "killed", "timed_out", "interrupted")
export type JobState = typeof JobState.Type

export const JobRow = Schema.Struct({
  id: Schema.Number,
  command: Schema.String,
  state: JobState,
  conversation: Schema.String,
  originInterface: Schema.String,
  originChannel: Schema.String,
  originUser: Schema.String,
  sessionId: Schema.String,
  tag: Schema.String,
  pid: Schema.NullOr(Schema.Number),
  outputFile: Schema.String,
  startedAtMs: Schema.Number,
  endedAtMs: Schema.NullOr(Schema.Number),
  exitCode: Schema.NullOr(Schema.Number),
  signal: Schema.NullOr(Schema.String),
  outputBytes: Schema.Number,
  droppedBytes: Schema.Number,
  artifactId: Schema.NullOr(Schema.String)
})
export type JobRow = typeof JobRow.Type

export type NewJob = Pick<
  JobRow,
  "command" | "conversation" | "originInterface" | "originChannel" | "originUser" | "sessionId" | "tag" | "outputFile" | "startedAtMs"
>

export interface JobEnd {
  readonly state: Exclude<JobState, "running">
  readonly endedAtMs: number
  readonly exitCode: number | null
  readonly signal: string | null
  readonly outputBytes: number
  readonly droppedBytes: number
  readonly artifactId: string | null
}

const failed = (what: string) => (error: { readonly message: string }) =>
  toolFailure("UNEXPECTED", `jobs: could not ${what} kern.db's background_jobs: ${error.message}`)

const columns = "id, command, state, conversation, origin_interface, origin_channel, origin_user, session_id, tag, pid, " +
  "output_file, started_at_ms, ended_at_ms, exit_code, signal, output_bytes, dropped_bytes, artifact_id"

/** The background jobs' rows in kern.db: what `jobs`, `kern jobs` and the next start read. */
export class JobStore extends Effect.Service<JobStore>()("kern/tools/JobStore", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const select = sql.unsafe(`SELECT ${columns} FROM background_jobs`)

    const decodeId = Schema.decodeUnknown(Schema.Tuple(Schema.Struct({ id: Schema.Number })))

    const byId = SqlSchema.findOne({
      Request: Schema.Number,
      Result: JobRow,
      execute: (id) => sql`${select} WHERE id = ${id}`
    })

    const inState = SqlSchema.findAll({
      Request: JobState,
      Result: JobRow,
      execute: (state) => sql`${select} WHERE state = ${state} ORDER BY id`
    })

    const recent = SqlSchema.findAll({
      Request: Schema.Struct({ conversation: Schema.NullOr(Schema.String), limit: Schema.Number }),
      Result: JobRow,
      execute: ({ conversation, limit }) =>
        conversation === null
          ? sql`${select} ORDER BY id DESC LIMIT ${limit}`
          : sql`${select} WHERE conversation = ${conversation} ORDER BY id DESC LIMIT ${limit}`
    })

    return {
      /** A new `running` row; its id is the job's number. */
      add: (job: NewJob) =>
        sql`INSERT INTO background_jobs ${sql.insert({ ...job, state: "running" })} RETURNING id`.pipe(
          Effect.flatMap(decodeId),
          Effect.map(([row]) => row.id),
          Effect.mapError(failed("add to"))
        ),
      /** The process group leader's pid, once spawned. */
      setPid: (id: number, pid: number) =>
        sql`UPDATE background_jobs SET pid = ${pid} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.mapError(failed("update"))),
      /** Records how a running job ended; false when it had ended already (nothing changed). */
      end: (id: number, end: JobEnd) =>
        sql`UPDATE background_jobs SET state = ${end.state}, ended_at_ms = ${end.endedAtMs}, exit_code = ${end.exitCode},
          signal = ${end.signal}, output_bytes = ${end.outputBytes}, dropped_bytes = ${end.droppedBytes},
          artifact_id = ${end.artifactId} WHERE id = ${id} AND state = 'running' RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.mapError(failed("update"))
        ),
      get: (id: number) => byId(id).pipe(Effect.mapError(failed("read"))),
      running: inState("running").pipe(Effect.mapError(failed("read"))),
      /** The latest jobs, newest first: of one conversation, or of all (null). */
      recent: (conversation: string | null, limit = 50) => recent({ conversation, limit }).pipe(Effect.mapError(failed("read")))
    } as const
  })
}) {}
