import { Duration, Effect, Schema } from "effect"
import { toolFailure } from "../kernel/ToolFailure.js"
import { type OutputCapture, runInProcessGroup, streamBuffer } from "./processGroup.js"
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
  )
})
export type BashArgs = typeof BashArgs.Type

export const bashTool: ToolMetadata = {
  toolId: "bash",
  name: "Bash",
  description: "Run a shell command in the agent folder. Returns the exit code, stdout and stderr. The command and " +
    "everything it starts are killed at the timeout; background processes do not outlive the call.",
  safetyClass: "DESTRUCTIVE",
  idempotent: false,
  timeoutMs: 60_000,
  scope: "full"
}

/** The kernel's timeout for one bash call: the command's own timeout plus a grace to clean up. */
export const bashKernelTimeoutMs = (args: BashArgs): number => (args.timeout ?? bashDefaultTimeoutMs) + bashKernelGraceMs

export interface BashOutput {
  readonly exitCode: number | null
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
  /** `exit code`, then `STDOUT:` and `STDERR:` sections (compaction works on each section). */
  readonly text: string
}

const tailOf = (text: string, chars: number) => (text.length > chars ? `…${text.slice(-chars)}` : text)

const timeoutMessage = (timeoutMs: number, capture: OutputCapture) => {
  const stdout = capture.stdout.text()
  const stderr = capture.stderr.text()
  return `command timed out after ${timeoutMs} ms; it and every process it started were killed. ` +
    `Pass a larger timeout (max ${bashMaxTimeoutMs}) or run less at once.` +
    (stdout === "" ? "" : `\nSTDOUT (end):\n${tailOf(stdout, 2000)}`) +
    (stderr === "" ? "" : `\nSTDERR (end):\n${tailOf(stderr, 2000)}`)
}

const render = (exitCode: number | null, signal: string | null, stdout: string, stderr: string) =>
  [
    exitCode === null ? `killed by ${signal ?? "a signal"}` : `exit code: ${exitCode}`,
    "STDOUT:",
    ...(stdout === "" ? [] : [stdout.endsWith("\n") ? stdout.slice(0, -1) : stdout]),
    "STDERR:",
    ...(stderr === "" ? [] : [stderr.endsWith("\n") ? stderr.slice(0, -1) : stderr])
  ].join("\n")

/** Runs a command under the write lock, with the secret keys of `.kern/.env` removed from its environment. */
export const bash = Effect.fn("kern.tools.bash")(function*(args: BashArgs) {
  const workspace = yield* Workspace
  const lock = yield* WriteLock
  const timeoutMs = args.timeout ?? bashDefaultTimeoutMs
  if (args.command.includes("\0")) return yield* toolFailure("VALIDATION_ERROR", "command contains a NUL character")
  yield* Effect.annotateCurrentSpan({ timeoutMs })
  const capture = yield* Effect.sync(() => ({ stdout: streamBuffer(maxStreamBytes), stderr: streamBuffer(maxStreamBytes) }))
  const run = yield* lock.withLock(
    runInProcessGroup(args.command, { cwd: workspace.root, env: workspace.childEnv }, capture).pipe(
      Effect.timeoutFail({
        duration: Duration.millis(timeoutMs),
        onTimeout: () => toolFailure("TIMEOUT", timeoutMessage(timeoutMs, capture))
      })
    )
  )
  return {
    exitCode: run.exitCode,
    signal: run.signal,
    stdout: run.stdout,
    stderr: run.stderr,
    text: render(run.exitCode, run.signal, run.stdout, run.stderr)
  } satisfies BashOutput
})
