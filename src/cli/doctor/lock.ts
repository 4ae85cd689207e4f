import type { FileSystem } from "@effect/platform"
import { Effect, Option } from "effect"
import type { AgentPaths } from "../../config/paths.js"
import * as LockFile from "../../storage/LockFile.js"
import * as PidFile from "../../storage/PidFile.js"
import { type CheckResult, type Finding, problem, resultOf, warning } from "./Check.js"

/**
 * The folder's lock (`.kern/agent.lock`) and the background agent's pid file, read and never taken: a running agent
 * is left undisturbed. A lock whose process is gone is a problem (kern takes it over at its next start, but until then
 * status and clients take the agent for stopped); a pid file of a gone process is a warning.
 */
export const lockCheck = (paths: AgentPaths): Effect.Effect<CheckResult, { readonly message: string }, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const findings: Array<Finding> = []
    const found = yield* LockFile.inspect(paths.lockFile)
    let summary = "no kern runs this agent now"
    if (found._tag === "Live") {
      summary = `held by pid ${found.holder.pid} (kern ${found.holder.command}) since ${found.holder.startedAt}`
    } else if (found._tag === "Stale") {
      findings.push(problem(
        `${paths.lockFile} is stale: ${found.why}`,
        `no kern runs this agent: remove the stale lock with rm ${paths.lockFile} (kern run or kern start would also take it over)`
      ))
    }
    const pid = yield* PidFile.read(paths.pidFile)
    if (Option.isSome(pid)) {
      const now = yield* PidFile.check(pid.value)
      if (now._tag === "Gone" || now._tag === "Reused") {
        findings.push(warning(
          `${paths.pidFile} names pid ${pid.value.pid}, which is no longer the background agent (it was killed or crashed)`,
          `rm ${paths.pidFile}, then kern start if the agent should run in the background`
        ))
      }
    }
    return resultOf("lock", findings, summary)
  })
