import { Effect, Schema } from "effect"
import { RunContext } from "../kernel/RunContext.js"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import { Jobs } from "./Jobs.js"
import { type ProcessRun, runInProcessGroup } from "./processGroup.js"
import { describeKilled, makeCallTag } from "./processTag.js"
import type { ToolMetadata } from "./toolMetadata.js"
import { Workspace } from "./Workspace.js"
import { WriteLock } from "./WriteLock.js"

export const bashDefaultTimeoutMs = 120_000
export const bashMaxTimeoutMs = 600_000
/** What the kernel allows beyond the command's own timeout: time to kill the group and collect the output. */
export const bashKernelGraceMs = 10_000
const maxStreamBytes = 16 * 1024 * 1024

export const BashArgs = Schema.Struct({
  command: Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "Shell command, run with /bin/bash -c in the agent folder"
  }),
  timeout: Schema.optional(
    Schema.Int.pipe(Schema.between(1, bashMaxTimeoutMs)).annotations({
      description: "Milliseconds before the command and all its children are killed (default 120000, max 600000)"
    })
  ),
  background: Schema.optional(Schema.Boolean.annotations({
    description: "Run it as a background job: returns a job id at once; when it ends, its exit code and output tail " +
      "come back as a new message. Read and control it with the jobs tool. Without timeout, it may run up to the " +
      "config's jobs.maxLifetimeMs"
  }))
})
export type BashArgs = typeof BashArgs.Type

export const bashTool: ToolMetadata = {
  toolId: "bash",
  name: "Bash",
  description: "Run a shell command in the agent folder. Returns the exit code, stdout and stderr. The command and " +
    "everything it starts are killed at the timeout; background processes (even setsid, nohup or daemons) are " +
    "killed when the command finishes: they do not outlive the call. For a long command, pass background: true: it " +
    "returns a job id at once and reports the job's end later as a new message.",
  safetyClass: "DESTRUCTIVE",
  idempotent: false,
  timeoutMs: 60_000,
  scope: "full"
}

/** The kernel's timeout for one bash call: the command's own timeout plus a grace to clean up. */
export const bashKernelTimeoutMs = (args: BashArgs): number =>
  args.background === true ? bashKernelGraceMs : (args.timeout ?? bashDefaultTimeoutMs) + bashKernelGraceMs

export interface BashOutput {
  readonly exitCode: number | null
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
  /** `exit code`, then `STDOUT:` and `STDERR:` sections (compaction works on each section). */
  readonly text: string
}

const tailOf = (text: string, chars: number) => (text.length > chars ? `…${text.slice(-chars)}` : text)

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "es"}`

/** What the end of the call killed beyond the command itself, and what it could not. */
const cleanupNotes = (run: ProcessRun): Array<string> => [
  ...(run.reaped.scanned ? [] : ["processes that left the process group could not be looked for on this system"]),
  ...(run.reaped.survivors > 0 ? [`${plural(run.reaped.survivors, "process")} still running after repeated kills`] : []),
  ...(run.pipesHeld ? ["the output pipes were held open by a process kern could not find (it may still run)"] : [])
]

const timeoutMessage = (timeoutMs: number, run: ProcessRun) => {
  const killed = run.reaped.killed
  const what = killed.length === 0
    ? "its process group was killed"
    : `killed ${plural(killed.length, "process")}: ${describeKilled(killed)}`
  return [
    `command timed out after ${timeoutMs} ms and was stopped; ${what}.`,
    ...cleanupNotes(run).map((note) => `Note: ${note}.`),
    `Pass a larger timeout (max ${bashMaxTimeoutMs}) or run less at once.`
  ].join("\n") +
    (run.stdout === "" ? "" : `\nSTDOUT (end):\n${tailOf(run.stdout, 2000)}`) +
    (run.stderr === "" ? "" : `\nSTDERR (end):\n${tailOf(run.stderr, 2000)}`)
}

/** The exit line, then a line per process killed because it was still running when the command finished. */
const statusLines = (run: ProcessRun): Array<string> => {
  const killed = run.reaped.killed
  return [
    run.exitCode === null ? `killed by ${run.signal ?? "a signal"}` : `exit code: ${run.exitCode}`,
    ...(killed.length === 0 ? [] : [
      `killed ${plural(killed.length, "background process")} still running when the command finished ` +
      `(background processes do not outlive a bash call): ${describeKilled(killed)}`
    ]),
    ...cleanupNotes(run).map((note) => `note: ${note}`)
  ]
}

const render = (run: ProcessRun) =>
  [
    ...statusLines(run),
    "STDOUT:",
    ...(run.stdout === "" ? [] : [run.stdout.endsWith("\n") ? run.stdout.slice(0, -1) : run.stdout]),
    "STDERR:",
    ...(run.stderr === "" ? [] : [run.stderr.endsWith("\n") ? run.stderr.slice(0, -1) : run.stderr])
  ].join("\n")

export interface BashJobStarted {
  readonly jobId: number
  readonly text: string
}

/**
 * Starts the command as a background job (Jobs): not under the write lock, which it would hold for hours; with the
 * same environment, folder and tagging as a call in the foreground.
 */
export const bashInBackground = Effect.fn("kern.tools.bash.background")(function*(args: BashArgs) {
  const workspace = yield* Workspace
  if (args.command.includes("\0")) return yield* toolFailure("VALIDATION_ERROR", "command contains a NUL character")
  const jobs = yield* Jobs
  const ctx = yield* RunContext
  const row = yield* jobs.start({
    command: args.command,
    cwd: workspace.root,
    env: workspace.childEnv,
    folder: workspace.folder,
    lifetimeMs: args.timeout,
    ctx
  })
  return {
    jobId: row.id,
    text: `started background job ${row.id}; its end comes back as a new message ([job ${row.id} finished: …]). ` +
      `Meanwhile: jobs { action: "status" | "output" | "kill", id: ${row.id} }.`
  }
})

/** The registered handler: a background job with `background: true`, else the command in the foreground. */
export const bashHandler = (
  args: BashArgs
): Effect.Effect<BashOutput | BashJobStarted, ToolFailure, Workspace | WriteLock | Jobs | RunContext> =>
  args.background === true ? bashInBackground(args) : bash(args)

/** Runs a command in the foreground under the write lock, with the secret keys of `.kern/.env` removed from its environment. */
export const bash = Effect.fn("kern.tools.bash")(function*(args: BashArgs) {
  const workspace = yield* Workspace
  const lock = yield* WriteLock
  const timeoutMs = args.timeout ?? bashDefaultTimeoutMs
  if (args.command.includes("\0")) return yield* toolFailure("VALIDATION_ERROR", "command contains a NUL character")
  yield* Effect.annotateCurrentSpan({ timeoutMs, background: args.background === true })
  // Tagged with the agent folder even when the call runs in shared/: a dead runtime's orphans are reaped by it.
  const tag = yield* makeCallTag(workspace.folder)
  const run = yield* lock.withLock(
    runInProcessGroup(args.command, { cwd: workspace.root, env: workspace.childEnv, tag, timeoutMs, maxStreamBytes })
  )
  if (run.timedOut) return yield* toolFailure("TIMEOUT", timeoutMessage(timeoutMs, run))
  return {
    exitCode: run.exitCode,
    signal: run.signal,
    stdout: run.stdout,
    stderr: run.stderr,
    text: render(run)
  } satisfies BashOutput
})
