import { spawn, spawnSync } from "node:child_process"
import { kernBin } from "./build.js"

export { kernBin }

export interface CliResult {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs the built `kern` binary in a child process, with an environment of our choosing. */
export const runKern = (
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly env?: Record<string, string> } = {}
): CliResult => {
  const result = spawnSync(process.execPath, [kernBin, ...args], {
    cwd: options.cwd ?? process.cwd(),
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", ...options.env },
    encoding: "utf8",
    // A kern whose event loop is blocked never runs its SIGTERM handler: the safety net must be SIGKILL. The bound is
    // for a stuck kern, not a slow one: on a busy machine one command can take many seconds.
    timeout: 110_000,
    killSignal: "SIGKILL"
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

/** Options of a child process a test runs: its environment is the minimal one plus `env`. */
export interface ChildOptions {
  readonly cwd?: string
  readonly env?: Record<string, string>
  readonly onSpawn?: (child: import("node:child_process").ChildProcess) => void
  /** Give the child a stdin pipe to write to (otherwise it has none). */
  readonly stdin?: boolean
}

/** Runs `command` without blocking this process's event loop and collects its exit status, stdout and stderr. */
export const runCollected = (command: string, args: ReadonlyArray<string>, options: ChildOptions = {}): Promise<CliResult> =>
  new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? process.cwd(),
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", ...options.env },
      stdio: [options.stdin === true ? "pipe" : "ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    child.on("close", (status) => resolve({ status, stdout, stderr }))
    options.onSpawn?.(child)
  })

/**
 * Runs `kern` without blocking this process's event loop, so a fake server in the test process can answer it.
 * `onSpawn` gets the child (to kill it mid-turn).
 */
export const runKernAsync = (args: ReadonlyArray<string>, options: ChildOptions = {}): Promise<CliResult> =>
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
