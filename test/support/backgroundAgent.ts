import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { processRunning } from "../../src/storage/processState.js"

export const pidFileOf = (dir: string) => NodePath.join(dir, ".kern/agent.pid")

/** The pid `.kern/agent.pid` records (as the lock records its holder; an older kern wrote the bare pid). */
export const recordedPid = (dir: string): number => {
  const record = JSON.parse(NodeFs.readFileSync(pidFileOf(dir), "utf8")) as number | { pid: number }
  return typeof record === "number" ? record : record.pid
}


/** The background agent of `dir` is killed when the test's scope closes, whatever happened. */
export const killedAtEnd = (dir: string) =>
  Effect.addFinalizer(() =>
    Effect.sync(() => {
      const pid = NodeFs.existsSync(pidFileOf(dir)) ? recordedPid(dir) : undefined
      if (pid !== undefined && pid > 0 && processRunning(pid)) process.kill(pid, "SIGKILL")
    })
  )
