import * as NodePath from "node:path"

/** The files of an agent folder (DESIGN.md, Contracts). */
export interface AgentPaths {
  readonly dir: string
  readonly kernDir: string
  readonly configFile: string
  readonly envFile: string
  readonly dbFile: string
  readonly sessionsDir: string
  /** A count record per session (src/session/SessionIndex.ts), apart so `sessions/` holds only the sessions. */
  readonly sessionCountsDir: string
  readonly artifactsDir: string
  /** Files that came with messages, content-addressed (src/media/MediaStore.ts). */
  readonly mediaDir: string
  readonly logsDir: string
  /** Held by the one runtime that writes the folder (src/runtime/AgentLock.ts). */
  readonly lockFile: string
  /** The background agent `kern start` launched (src/storage/PidFile.ts). */
  readonly pidFile: string
}

export const agentPaths = (dir: string): AgentPaths => {
  const root = NodePath.resolve(dir)
  const kernDir = NodePath.join(root, ".kern")
  return {
    dir: root,
    kernDir,
    configFile: NodePath.join(kernDir, "config.json"),
    envFile: NodePath.join(kernDir, ".env"),
    dbFile: NodePath.join(kernDir, "kern.db"),
    sessionsDir: NodePath.join(kernDir, "sessions"),
    sessionCountsDir: NodePath.join(kernDir, "session-counts"),
    artifactsDir: NodePath.join(kernDir, "artifacts"),
    mediaDir: NodePath.join(kernDir, "media"),
    logsDir: NodePath.join(kernDir, "logs"),
    lockFile: NodePath.join(kernDir, "agent.lock"),
    pidFile: NodePath.join(kernDir, "agent.pid")
  }
}
