import { Effect } from "effect"

/** How one check came out: `problem` makes `kern doctor` exit 1; a `warning` is said and leaves the exit at 0. */
export type Level = "ok" | "warning" | "problem"

/** Something a check found wrong: what, and what to do about it. */
export interface Finding {
  readonly level: Exclude<Level, "ok">
  readonly text: string
  readonly fix: string
}

/** One line of the doctor's report, with the fixes of what it found. */
export interface CheckResult {
  readonly check: string
  readonly level: Level
  readonly summary: string
  readonly fixes: ReadonlyArray<string>
}

export const problem = (text: string, fix: string): Finding => ({ level: "problem", text, fix })
export const warning = (text: string, fix: string): Finding => ({ level: "warning", text, fix })

/** The check's line: `okSummary` when nothing was found, else what was found, the worst level deciding. */
export const resultOf = (check: string, findings: ReadonlyArray<Finding>, okSummary: string): CheckResult =>
  findings.length === 0
    ? { check, level: "ok", summary: okSummary, fixes: [] }
    : {
      check,
      level: findings.some((finding) => finding.level === "problem") ? "problem" : "warning",
      summary: findings.map((finding) => finding.text).join("; "),
      fixes: [...new Set(findings.map((finding) => finding.fix))]
    }

/** A check whose question could not even be asked: a problem naming why, never a crash of the whole doctor. */
export const guarded = <R>(check: string, run: Effect.Effect<CheckResult, { readonly message: string }, R>) =>
  run.pipe(
    Effect.catchAll((error) =>
      Effect.succeed(resultOf(check, [problem(`could not check: ${error.message}`, `look at what the message names, then run kern doctor again`)], ""))
    ),
    Effect.catchAllDefect((defect) =>
      Effect.succeed(resultOf(check, [problem(`could not check: ${String(defect)}`, "run kern doctor again; if it repeats, report it")], ""))
    ),
    Effect.withSpan(`kern.doctor.${check}`)
  )

/** A check that needs what an earlier one found missing (the config, a readable kern.db). */
export const skipped = (check: string, why: string): CheckResult => ({ check, level: "warning", summary: `not checked: ${why}`, fixes: [] })
