import { Command, CommandExecutor } from "@effect/platform"
import { Effect, Schema, Stream, String as Str } from "effect"

/** git could not be run, or a git command failed. `missing` means no git binary on PATH. */
export class GitError extends Schema.TaggedError<GitError>()("GitError", {
  reason: Schema.Literal("missing", "failed"),
  command: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return this.reason === "missing"
      ? "git is not installed (no `git` on PATH)"
      : `\`git ${this.command}\` failed: ${this.detail}`
  }
}

export interface GitOutput {
  readonly exitCode: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * Prefixed to every git command kern runs. The agent folder is the model's workspace: a hook or an fsmonitor
 * command planted there (by the model, or by anything it fetched) must never run as the operator through kern.
 */
export const hooksOff: ReadonlyArray<string> = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"]

const collect = (stream: Stream.Stream<Uint8Array, unknown>) =>
  stream.pipe(Stream.decodeText(), Stream.mkString, Effect.orElseSucceed(() => ""))

/** The agent folder's git repository: memory is plain text under version control. */
export class Git extends Effect.Service<Git>()("kern/memory/Git", {
  effect: Effect.gen(function*() {
    const executor = yield* CommandExecutor.CommandExecutor

    const exec = (dir: string, args: ReadonlyArray<string>): Effect.Effect<GitOutput, GitError> =>
      Effect.scoped(
        Effect.gen(function*() {
          const process = yield* executor.start(
            Command.make("git", ...hooksOff, ...args).pipe(
              Command.workingDirectory(dir),
              Command.env({ GIT_TERMINAL_PROMPT: "0" })
            )
          )
          const [stdout, stderr, exitCode] = yield* Effect.all(
            [collect(process.stdout), collect(process.stderr), process.exitCode],
            { concurrency: 3 }
          )
          return { exitCode: Number(exitCode), stdout, stderr }
        })
      ).pipe(
        Effect.mapError((error) =>
          new GitError({
            reason: error._tag === "SystemError" && error.reason === "NotFound" ? "missing" : "failed",
            command: args.join(" "),
            detail: error.message
          })
        ),
        Effect.withSpan("kern.git.exec", { attributes: { args: args.join(" ") } })
      )

    /** Runs git and fails with its stderr when it exits non-zero. */
    const run = (dir: string, args: ReadonlyArray<string>) =>
      Effect.flatMap(exec(dir, args), (output) =>
        output.exitCode === 0
          ? Effect.succeed(output.stdout)
          : Effect.fail(
            new GitError({
              reason: "failed",
              command: args.join(" "),
              detail: Str.trim(output.stderr) || `exit code ${output.exitCode}`
            })
          ))

    /** Whether `dir` is the top of its own repository (not merely inside a parent's). */
    const isRepoRoot = (dir: string, realDir: string) =>
      exec(dir, ["rev-parse", "--show-toplevel"]).pipe(
        Effect.map((output) => output.exitCode === 0 && Str.trim(output.stdout) === realDir)
      )

    const hasIdentity = (dir: string) =>
      Effect.all([exec(dir, ["config", "user.name"]), exec(dir, ["config", "user.email"])]).pipe(
        Effect.map(([name, email]) => name.exitCode === 0 && email.exitCode === 0)
      )

    /** Commits exactly `paths`; uses a local identity when the user has none configured. Returns false when nothing changed. */
    const commit = (dir: string, paths: ReadonlyArray<string>, message: string, fallbackName: string) =>
      Effect.gen(function*() {
        yield* run(dir, ["add", "--", ...paths])
        const staged = yield* exec(dir, ["diff", "--cached", "--quiet"])
        if (staged.exitCode === 0) return false
        const identity = (yield* hasIdentity(dir))
          ? []
          : ["-c", `user.name=${fallbackName}`, "-c", `user.email=${fallbackName}@kern.local`]
        yield* run(dir, [...identity, "commit", "-q", "-m", message])
        return true
      })

    return { exec, run, isRepoRoot, commit } as const
  })
}) {}
