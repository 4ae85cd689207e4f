import { Effect } from "effect"
import * as NodeFs from "node:fs"
import type { AgentPaths } from "../../config/paths.js"
import { type CheckResult, type Finding, problem, resultOf } from "./Check.js"

const modeOf = (path: string): number | undefined => {
  const stat = NodeFs.statSync(path, { throwIfNoEntry: false })
  return stat === undefined ? undefined : stat.mode & 0o777
}

const octal = (mode: number) => mode.toString(8).padStart(3, "0")

const writable = (path: string): boolean => {
  try {
    NodeFs.accessSync(path, NodeFs.constants.W_OK)
    return true
  } catch {
    return false
  }
}

/**
 * `.kern/` (every conversation) 0700 and `.kern/.env` (the keys) 0600: no other local user may read them; the folder
 * and `.kern/` writable by this user. Only looked at (stat and access): never changed.
 */
export const permissionsCheck = (paths: AgentPaths): Effect.Effect<CheckResult> =>
  Effect.sync(() => {
    const findings: Array<Finding> = []
    const private_ = (path: string, wanted: number, what: string) => {
      const mode = modeOf(path)
      if (mode !== undefined && (mode & 0o077) !== 0) {
        findings.push(problem(
          `${path} is readable by other users (mode ${octal(mode)}; ${what})`,
          `chmod ${octal(wanted)} ${path}`
        ))
      }
    }
    private_(paths.kernDir, 0o700, "it holds every conversation")
    private_(paths.envFile, 0o600, "it holds the API keys and tokens")
    private_(paths.dbFile, 0o600, "it holds the conversations and the audit log")
    for (const path of [paths.dir, paths.kernDir]) {
      if (modeOf(path) !== undefined && !writable(path)) {
        findings.push(problem(`${path} is not writable by you`, `chmod u+w ${path} (or run kern as the folder's owner)`))
      }
    }
    return resultOf("permissions", findings, ".kern/ and .kern/.env are private; the folder is writable")
  })
