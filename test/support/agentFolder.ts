import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { runKern } from "./cli.js"
import { makeTempDir } from "./tempDir.js"

/**
 * A fresh agent folder made by the real `kern init` (no git), with `config` merged into its config.json.
 * Fails the test if init fails.
 */
export const initAgentFolder = (args: ReadonlyArray<string> = [], config: Record<string, unknown> = {}): string => {
  const cwd = makeTempDir()
  const result = runKern(["init", "agent", "--no-git", ...args], { cwd })
  if (result.status !== 0) throw new Error(`kern init failed: ${result.stderr}`)
  const dir = NodePath.join(cwd, "agent")
  if (Object.keys(config).length > 0) {
    const file = NodePath.join(dir, ".kern/config.json")
    NodeFs.writeFileSync(file, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(file, "utf8")), ...config }))
  }
  return dir
}

/** An agent folder whose model is a fake server. */
export const initAgentWithModel = (baseURL: string, config: Record<string, unknown> = {}) =>
  initAgentFolder(["--model", "test-model", "--base-url", baseURL], config)
