import * as NodeContext from "@effect/platform-node/NodeContext"
import { Layer, type Scope } from "effect"
import * as NodePath from "node:path"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import * as Layers from "../../src/runtime/layers.js"
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

/**
 * The running agent's core layers over `dir` (Layers.runningAgentCoreLayer: no turn loop serving), built in `scope`,
 * with `apiKey` as the provider's key: what a test that drives the runtime or its stores by hand builds.
 */
export const buildAgentCore = (dir: string, scope: Scope.Scope, apiKey = "sk-test") =>
  Layer.buildWithScope(
    Layers.runningAgentCoreLayer(dir, { command: "kern test", waitSeconds: 10 }).pipe(
      Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: apiKey })),
      Layer.provide(NodeContext.layer)
    ),
    scope
  )
