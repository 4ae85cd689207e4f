// What the quick bundles (src/quick/chat.ts, status.ts) share: a command run as the full CLI runs it (its failure one
// line on stderr with its exit code, warnings on stderr, a closed stdout ending it quietly), and the hand-over to the
// full CLI when the command turns out to be one the bundle does not answer.
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import type { FileSystem } from "@effect/platform/FileSystem"
import type { Path } from "@effect/platform/Path"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { outputClosed } from "../cli/closedOutput.js"
import { failureReport } from "../cli/errors.js"
import { withForegroundLogging } from "../cli/foregroundLogger.js"
import { exitCodeTeardown } from "../cli/teardown.js"
import { ProcessEnv } from "../config/ProcessEnv.js"

/**
 * How a quick command ended: its exit code, "full" when the full CLI must run the command line instead, or "local"
 * when the command runs in this process from another bundle (a chat's turn when no agent serves the folder).
 */
export type Outcome = number | "full" | "local"

/**
 * Runs `command` as the process: its failure reported as the full CLI reports it (a usage mistake handed to the full
 * CLI, which adds the command's usage line), then exits with its code; on "full", starts the full CLI (`full`), on
 * "local" the bundle that takes the command on (`local`).
 */
export const runQuick = <E>(
  command: Effect.Effect<Outcome, E, FileSystem | Path | ProcessEnv>,
  full: () => void,
  local: () => void = full,
  /** What the command reads as its environment (a command that runs tools keeps its own in memory only). */
  env: ProcessEnv["Type"] = process.env
): void => {
  const program = command.pipe(
    Effect.catchAll((error): Effect.Effect<Outcome> => {
      const { code, line, usage } = failureReport(error)
      return usage ? Effect.succeed<Outcome>("full") : Effect.as(Console.error(line), code)
    }),
    withForegroundLogging,
    Effect.raceFirst(outputClosed([process.stdout, process.stderr])),
    Effect.provideService(ProcessEnv, env),
    Effect.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer))
  )
  const exitCode = exitCodeTeardown(130)
  NodeRuntime.runMain(program, {
    teardown: (exit, onExit) => {
      if (Exit.isSuccess(exit) && (exit.value === "full" || exit.value === "local")) {
        onExit(0)
        if (exit.value === "full") full()
        else local()
      } else exitCode(exit, onExit)
    }
  })
}
