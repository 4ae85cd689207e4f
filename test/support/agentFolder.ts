import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { testBuild } from "./build.js"
import { kernBin } from "./cli.js"
import { makeTempDir } from "./tempDir.js"

/**
 * The folder the real `kern init agent --no-git <args>` made, once per test build and set of arguments: init's output
 * depends on nothing else (the folder is always named `agent`), and a spawned kern costs a second on a busy machine.
 * The one spawn per build and set of arguments is synchronous, so that making a folder stays a plain call: it blocks the
 * worker for as long as one `kern init` takes (seconds), far from vitest's 60 s RPC deadline.
 */
const initialized = (args: ReadonlyArray<string>): string => {
  const build = NodeFs.readFileSync(NodePath.join(testBuild, "inputs.sha256"), "utf8")
  const key = createHash("sha256").update(`${build}\0${JSON.stringify(args)}`).digest("hex").slice(0, 24)
  const cached = NodePath.join(testBuild, "init-cache", key)
  if (NodeFs.existsSync(cached)) return NodePath.join(cached, "agent")
  const cwd = makeTempDir()
  const result = spawnSync(process.execPath, [kernBin, "init", "agent", "--no-git", ...args], {
    cwd,
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp" },
    encoding: "utf8",
    timeout: 110_000,
    killSignal: "SIGKILL"
  })
  if (result.status !== 0) throw new Error(`kern init failed: ${result.stderr}`)
  NodeFs.mkdirSync(NodePath.dirname(cached), { recursive: true })
  try {
    NodeFs.renameSync(cwd, cached)
  } catch (error) {
    // Another test file made the same folder meanwhile: theirs serves as well as ours.
    if (!NodeFs.existsSync(cached)) throw error
  }
  return NodePath.join(cached, "agent")
}

/**
 * A fresh agent folder made by the real `kern init` (no git), with `config` merged into its config.json.
 * Fails the test if init fails.
 */
export const initAgentFolder = (args: ReadonlyArray<string> = [], config: Record<string, unknown> = {}): string => {
  const dir = NodePath.join(makeTempDir(), "agent")
  NodeFs.cpSync(initialized(args), dir, { recursive: true, preserveTimestamps: true })
  if (Object.keys(config).length > 0) {
    const file = NodePath.join(dir, ".kern/config.json")
    NodeFs.writeFileSync(file, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(file, "utf8")), ...config }))
  }
  return dir
}

/**
 * An agent folder whose model is a fake server. `--base-url` only writes `baseURL` into config.json, so the folder is
 * made without it (one init for every fake server's port) and the URL is written there.
 */
export const initAgentWithModel = (baseURL: string, config: Record<string, unknown> = {}) =>
  initAgentFolder(["--model", "test-model"], { baseURL, ...config })
