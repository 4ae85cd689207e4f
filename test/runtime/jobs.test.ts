import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Option, Scope } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import type { Audience } from "../../src/kernel/Audience.js"
import { makeRunContext } from "../../src/kernel/RunContext.js"
import { ToolExecutor } from "../../src/kernel/ToolExecutor.js"
import type { RunToolScope } from "../../src/kernel/toolScope.js"
import * as Layers from "../../src/runtime/layers.js"
import { Followups } from "../../src/tools/Followups.js"
import { JobStore } from "../../src/tools/JobStore.js"
import { MessageQueue } from "../../src/turn/MessageQueue.js"
import { agentDatabaseConfig, databases } from "../support/databases.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { eventually, eventuallyEffect } from "../support/waitFor.js"

// Background jobs in a running agent (no model: the followup turns are read off the queue): each job's end is
// reported once into the conversation that started it; limits; kill; who sees and controls which job.

/** An agent folder; its kern.db where `database` puts it (test/support/databases.ts agentDatabaseConfig). */
const agentDir = (jobs: Record<string, number>, database: { readonly database?: unknown }) => {
  const dir = NodePath.join(NodeFs.realpathSync(makeTempDir()), "agent")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({ model: "m", heartbeatInterval: 0, autoCommit: false, recall: false, jobs, ...database }),
    "shared/.keep": ""
  })
  return dir
}

/** The running agent in `scope`, closed with the test's scope if the test ends before it closes it (a failure). */
const started = (dir: string, scope: Scope.CloseableScope) =>
  Effect.addFinalizer(() => Scope.close(scope, Exit.void)).pipe(Effect.zipRight(Layer.buildWithScope(
    Layers.runningAgentCoreLayer(dir, { command: "kern test", waitSeconds: 10 }).pipe(
      Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test", PATH: process.env.PATH ?? "/usr/bin" })),
      Layer.provide(NodeContext.layer)
    ),
    scope
  )))

/**
 * Job `id`'s row once its end is recorded: a job's report is posted first and its row marked after (jobsLive's
 * conclude), so a report taken off the queue may come before the row says so.
 */
const endedRow = (context: Context.Context<JobStore>, id: number) =>
  Effect.gen(function*() {
    const store = Context.get(context, JobStore)
    const ended = Effect.map(store.get(id), (row) => Option.isSome(row) && row.value.state !== "running")
    expect(yield* eventuallyEffect(ended)).toBe(true)
    return Option.getOrThrow(yield* store.get(id))
  })

const friend: Audience = { conversationId: "telegram-42", interface: "telegram", channel: "42", userId: "42", memory: "shared" }
const stranger: Audience = { conversationId: "telegram-7", interface: "telegram", channel: "7", userId: "7", memory: "shared" }

/** Runs a tool call as the operator (no audience) or as a paired user with a scope. */
const call = (context: Context.Context<ToolExecutor>, toolId: string, args: unknown, who?: { audience: Audience; toolScope: RunToolScope }) =>
  Effect.gen(function*() {
    const ctx = yield* makeRunContext({
      sessionId: who === undefined ? "s-main" : `s-${who.audience.conversationId}`,
      ...(who === undefined ? {} : { audience: who.audience, toolScope: who.toolScope, origin: who.audience })
    })
    return yield* Context.get(context, ToolExecutor).executeIn(ctx, toolId, args)
  })

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe.each(databases)("background jobs on $dialect", (database) => {
  it.scopedLive("a job's end comes back once, into the conversation that started it (the operator's and a paired user's)", () =>
    Effect.gen(function*() {
      const dir = agentDir({}, yield* agentDatabaseConfig(database))
      const scope = yield* Scope.make()
      const context = yield* started(dir, scope)
      const queue = Context.get(context, MessageQueue)

      const mine = yield* call(context, "bash", { command: "echo one; echo two >&2; exit 3", background: true })
      expect(mine.success).toBe(true)
      expect(mine.data).toMatchObject({ jobId: 1 })
      const report = yield* queue.next
      expect(report).toMatchObject({ interface: "cli", userId: "operator", conversation: "main" })
      expect(report.text).toMatch(/^\[job 1 finished: exit 3 after [0-9.]+s\] echo one/)
      expect(report.text).toContain("one\ntwo")
      yield* queue.endTurn(report.conversation)

      const theirs = yield* call(context, "bash", { command: "pwd; echo from-friend", background: true }, { audience: friend, toolScope: "full" })
      expect(theirs.success, theirs.errorMessage).toBe(true)
      const second = yield* queue.next
      expect(second).toMatchObject({ interface: "telegram", channel: "42", userId: "42", conversation: "telegram-42" })
      expect(second.text).toMatch(/^\[job 2 finished: exit 0 after/)
      // It ran where the friend's bash runs: shared/.
      expect(second.text).toContain(`${NodePath.join(dir, "shared")}\nfrom-friend`)

      const followups = Context.get(context, Followups)
      expect(yield* followups.posted("job:1:ended")).toBe(true)
      expect(yield* followups.posted("job:2:ended")).toBe(true)
      const store = Context.get(context, JobStore)
      yield* Effect.all([endedRow(context, 1), endedRow(context, 2)])
      const rows = yield* store.recent(null)
      expect(rows.map((row) => [row.id, row.state, row.exitCode])).toEqual([[2, "finished", 0], [1, "finished", 3]])
      // The full output is an artifact of the session that started it; the working file is gone (once the row is marked).
      const first = rows[1]!
      expect(first.artifactId).toMatch(/^art_/)
      expect(yield* eventually(() => !NodeFs.existsSync(first.outputFile))).toBe(true)
      const output = yield* call(context, "jobs", { action: "output", id: 1 })
      expect(output.data).toMatchObject({ state: "finished", totalLines: 2 })
      const retrieved = yield* call(context, "retrieve_tool_output", { artifactId: first.artifactId })
      expect(String((retrieved.data as { text: string }).text)).toContain("one")
      yield* Scope.close(scope, Exit.void)
    }), 60_000)

  it.scopedLive("output past maxOutputBytes is dropped with a marker; a job past maxLifetimeMs is killed and reported so", () =>
    Effect.gen(function*() {
      const dir = agentDir({ maxOutputBytes: 1000, maxLifetimeMs: 400 }, yield* agentDatabaseConfig(database))
      const scope = yield* Scope.make()
      const context = yield* started(dir, scope)
      const queue = Context.get(context, MessageQueue)

      yield* call(context, "bash", { command: "head -c 5000 /dev/zero | tr '\\0' x; echo; echo the-end", background: true })
      const capped = yield* queue.next
      expect(capped.text).toMatch(/^\[job 1 finished: exit 0/)
      expect(capped.text).toContain("the-end")
      expect(capped.text).toContain("bytes past jobs.maxOutputBytes were dropped")
      yield* queue.endTurn(capped.conversation)
      expect(yield* endedRow(context, 1)).toMatchObject({ outputBytes: 1000, droppedBytes: 4009 })
      const output = yield* call(context, "jobs", { action: "output", id: 1 })
      expect((output.data as { text: string }).text).toContain("output past jobs.maxOutputBytes (1000 bytes) dropped")

      const long = yield* call(context, "bash", { command: "echo started; sleep 600", background: true })
      expect(long.success).toBe(true)
      const killed = yield* queue.next
      expect(killed.text).toMatch(/^\[job 2 killed: it ran past jobs\.maxLifetimeMs \(400 ms\) after/)
      expect(killed.text).toContain("started")
      const timedOut = yield* endedRow(context, 2)
      expect(timedOut).toMatchObject({ id: 2, state: "timed_out" })
      expect(alive(timedOut!.pid!)).toBe(false)
      yield* Scope.close(scope, Exit.void)
    }), 60_000)

  it.scopedLive("beyond maxConcurrent a start is refused naming the limit; jobs kill stops one; another conversation's job is refused", () =>
    Effect.gen(function*() {
      const dir = agentDir({ maxConcurrent: 1 }, yield* agentDatabaseConfig(database))
      const scope = yield* Scope.make()
      const context = yield* started(dir, scope)
      const queue = Context.get(context, MessageQueue)

      const first = yield* call(context, "bash", { command: "sleep 600", background: true }, { audience: friend, toolScope: "full" })
      expect(first.success, first.errorMessage).toBe(true)
      const refused = yield* call(context, "bash", { command: "sleep 600", background: true })
      expect(refused.success).toBe(false)
      expect(refused.errorMessage).toContain("jobs.maxConcurrent (1)")

      // Another paired user neither sees nor kills the friend's job; the operator sees all.
      const theirList = yield* call(context, "jobs", { action: "list" }, { audience: stranger, toolScope: "full" })
      expect((theirList.data as { text: string }).text).toBe("no background jobs")
      const theirKill = yield* call(context, "jobs", { action: "kill", id: 1 }, { audience: stranger, toolScope: "full" })
      expect(theirKill.success).toBe(false)
      expect(theirKill.errorMessage).toContain("no job 1 in this conversation")
      const all = yield* call(context, "jobs", { action: "list" })
      expect((all.data as { text: string }).text).toContain("sleep 600")

      const [row] = yield* Context.get(context, JobStore).recent(null)
      expect(alive(row!.pid!)).toBe(true)
      const kill = yield* call(context, "jobs", { action: "kill", id: 1 }, { audience: friend, toolScope: "full" })
      expect(kill.success, kill.errorMessage).toBe(true)
      expect(kill.data).toMatchObject({ id: 1, state: "killed" })
      expect(alive(row!.pid!)).toBe(false)
      const report = yield* queue.next
      expect(report).toMatchObject({ conversation: "telegram-42" })
      expect(report.text).toMatch(/^\[job 1 killed by jobs kill after/)
      // A slot is free again.
      const again = yield* call(context, "bash", { command: "true", background: true })
      expect(again.success, again.errorMessage).toBe(true)
      yield* Scope.close(scope, Exit.void)
    }), 60_000)

  it.scopedLive("a read-scope user cannot start a background bash: the kernel refuses before anything runs", () =>
    Effect.gen(function*() {
      const dir = agentDir({}, yield* agentDatabaseConfig(database))
      const scope = yield* Scope.make()
      const context = yield* started(dir, scope)
      const marker = NodePath.join(dir, "shared", "ran")
      const result = yield* call(context, "bash", { command: `touch ${marker}`, background: true }, { audience: friend, toolScope: "read" })
      expect(result.success).toBe(false)
      expect(result.errorCode).toBe("PERMISSION_DENIED")
      expect(result.errorMessage).toContain("bash needs tool scope")
      const jobs = yield* call(context, "jobs", { action: "list" }, { audience: friend, toolScope: "read" })
      expect(jobs.errorCode).toBe("PERMISSION_DENIED")
      expect(yield* Context.get(context, JobStore).recent(null)).toEqual([])
      expect(NodeFs.existsSync(marker)).toBe(false)
      yield* Scope.close(scope, Exit.void)
    }), 60_000)

  it.scopedLive("outside a running agent (kern kernel exec) a background command is refused with the reason, and nothing runs", () =>
    Effect.gen(function*() {
      const dir = agentDir({}, yield* agentDatabaseConfig(database))
      const context = yield* Layer.build(
        Layers.kernelAgentLayer(dir).pipe(
          Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test", PATH: process.env.PATH ?? "/usr/bin" })),
          Layer.provide(NodeContext.layer)
        )
      )
      const marker = NodePath.join(dir, "ran")
      const result = yield* call(context, "bash", { command: `touch ${marker}`, background: true })
      expect(result.success).toBe(false)
      expect(result.errorMessage).toContain("background jobs run only in a running agent")
      expect(NodeFs.existsSync(marker)).toBe(false)
    }), 60_000)
})
