import * as NodePath from "node:path"
import { makeTempDir, writeFiles } from "./tempDir.js"

/**
 * A fresh agent folder for a test that builds the agent's layers in-process: a config with no heartbeat, no commits,
 * no recall and UTC (what most runtime tests want), `config` merged over it, and any further `files`.
 */
export const testAgentDir = (config: Record<string, unknown> = {}, files: Readonly<Record<string, string>> = {}): string => {
  const dir = NodePath.join(makeTempDir(), "agent")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({
      model: "m",
      heartbeatInterval: 0,
      autoCommit: false,
      recall: false,
      timezone: "UTC",
      ...config
    }),
    ...files
  })
  return dir
}
