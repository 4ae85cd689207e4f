import { spawn } from "node:child_process"
import { kernBin } from "./build.js"

export { kernBin }

export interface CliResult {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Options of a child process a test runs: its environment is the minimal one plus `env`. */
export interface ChildOptions {
  readonly cwd?: string
  readonly env?: Record<string, string>
  readonly onSpawn?: (child: import("node:child_process").ChildProcess) => void
  /** Give the child a stdin pipe to write to (otherwise it has none). */
  readonly stdin?: boolean
  /**
   * When the child counts as stuck and is killed with SIGKILL (a kern whose event loop is blocked never runs its SIGTERM
   * handler). The bound is for a stuck child, not a slow one: on a busy machine one kern command can take many seconds,
   * and a command told to wait (`--wait 170`) needs a bound beyond its wait. Default 110 s, and none when
   * `onSpawn` is given: a test that holds the child (an agent it drives, a chat it kills) ends it itself.
   */
  readonly stuckAfterMs?: number
}

/** Runs `command` without blocking this process's event loop and collects its exit status, stdout and stderr. */
export const runCollected = (command: string, args: ReadonlyArray<string>, options: ChildOptions = {}): Promise<CliResult> =>
  new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? process.cwd(),
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", ...options.env },
      stdio: [options.stdin === true ? "pipe" : "ignore", "pipe", "pipe"]
    })
    const stuckAfterMs = options.stuckAfterMs ?? (options.onSpawn === undefined ? 110_000 : undefined)
    const stuck = stuckAfterMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), stuckAfterMs)
    let stdout = ""
    let stderr = ""
    child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    child.on("close", (status) => {
      clearTimeout(stuck)
      resolve({ status, stdout, stderr })
    })
    options.onSpawn?.(child)
  })

/**
 * Runs the test build's `kern` in a child process, with the minimal environment plus `options.env`. It never blocks this
 * process's event loop: a fake server in the test process can answer it, and vitest's worker keeps talking to its
 * runner (a blocked worker misses its RPC deadline on a busy machine). `onSpawn` gets the child (to kill it mid-turn).
 */
export const runKern = (args: ReadonlyArray<string>, options: ChildOptions = {}): Promise<CliResult> =>
  runCollected(process.execPath, [kernBin, ...args], options)

/** Resolves once `child`'s stdout has shown `text` (what it shows from the call on). */
export const stdoutShows = (child: import("node:child_process").ChildProcess, text: string) =>
  new Promise<void>((resolve) => {
    let seen = ""
    child.stdout?.on("data", (chunk: Buffer) => {
      seen += chunk.toString("utf8")
      if (seen.includes(text)) resolve()
    })
  })
