import type { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import * as NodeFs from "node:fs"
import type { LoadedConfig } from "../../config/AgentConfig.js"
import { counted } from "../../config/counted.js"
import * as SegmentStoreSql from "../../context/SegmentStoreSql.js"
import { healthOf, summarizerOf } from "../../context/summarizerHealth.js"
import { type CheckResult, type Finding, problem, resultOf, warning } from "./Check.js"

/**
 * The summarizer from what kern.db records: a summary model failing (its last error, its backoff), and segments still
 * waiting for their summary. A failing model is a problem; segments waiting are a warning (the running agent, or the
 * next long-lived one, writes them; recall keeps the messages meanwhile).
 */
export const summarizerCheck = (
  loaded: LoadedConfig,
  running: boolean
): Effect.Effect<CheckResult, { readonly message: string }, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const { config, paths } = loaded
    if (config.summaryBudget === 0) return resultOf("summarizer", [], "off (summaryBudget 0)")
    const store = yield* SegmentStoreSql.make
    const health = healthOf(yield* store.getHealth, summarizerOf(config))
    const sessions = NodeFs.existsSync(paths.sessionsDir)
      ? NodeFs.readdirSync(paths.sessionsDir).filter((name) => name.endsWith(".jsonl")).map((name) => name.slice(0, -".jsonl".length))
      : []
    let waiting = 0
    for (const session of sessions) {
      waiting += (yield* store.list(session)).filter((segment) => segment.summary === null).length
    }
    const findings: Array<Finding> = []
    if (health.consecutiveFailures > 0) {
      const now = yield* Clock.currentTimeMillis
      const next = health.nextAttemptAtMs !== null && health.nextAttemptAtMs > now
        ? `; the next try after ${new Date(health.nextAttemptAtMs).toISOString()}`
        : ""
      findings.push(problem(
        `the summary model (${config.summaryModel ?? config.model ?? "none"}) failed ${counted(health.consecutiveFailures, "time")} in a row: ` +
          `${health.lastError ?? "no error recorded"}${next}`,
        "fix what the error names (summaryModel, the provider's key or base URL in .kern/config.json and .kern/.env), " +
          "then kern segments rebuild tries it at once"
      ))
    }
    if (waiting > 0) {
      findings.push(warning(
        `${counted(waiting, "segment")} waiting for a summary`,
        running
          ? "nothing to do while the agent runs: it writes them in the background (kern status shows the summarizer)"
          : "start the agent (kern start): it writes them in the background; or kern segments rebuild"
      ))
    }
    const last = health.lastSuccessAtMs === null ? "no summary written yet" : `last summary ${new Date(health.lastSuccessAtMs).toISOString()}`
    return resultOf("summarizer", findings, `no segment waits for a summary (${last})`)
  }).pipe(Effect.mapError((error) => ({ message: `kern.db's segments could not be read: ${error.message}` })))
