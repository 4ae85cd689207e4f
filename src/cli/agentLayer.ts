import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Console, Context, Duration, Effect, Layer, Option } from "effect"
import * as AgentLive from "../agent/AgentLive.js"
import * as AgentLock from "../agent/AgentLock.js"
import { AgentRuntime } from "../agent/AgentRuntime.js"
import { PairingStore } from "../users/PairingStore.js"
import * as AgentConfig from "../config/AgentConfig.js"
import * as Kernel from "../kernel/Kernel.js"
import * as Provider from "../model/Provider.js"
import * as Database from "../storage/Database.js"
import * as Builtins from "../tools/builtins.js"
import * as RuntimeInfo from "../tools/RuntimeInfo.js"
import * as ToolServices from "../tools/ToolServices.js"
import { notAgentFolder } from "./dirs.js"

/** The agent folder's config, printing its warnings once; refuses a folder that `kern init` has not set up. */
const configLayer = (dir: string) =>
  Layer.tap(AgentConfig.layer(dir), (context) =>
    Effect.gen(function*() {
      const loaded = Context.get(context, AgentConfig.AgentConfig)
      if (!loaded.fileExists) {
        return yield* notAgentFolder(dir)
      }
      for (const warning of loaded.warnings) yield* Console.error(`kern: warning: ${warning}`)
    }))

const databaseLayer = Layer.unwrapEffect(
  Effect.map(AgentConfig.AgentConfig, ({ paths }) => Database.layer({ filename: paths.dbFile }))
)

/** How a turn runner holds the folder: what it is called and how long it waits for another runtime to finish. */
export interface HoldFolder {
  readonly command: string
  readonly waitSeconds: number
}

/** The agent lock held for the layer's lifetime, once the config says the folder is an agent's. */
const heldLockLayer = (hold: HoldFolder) =>
  AgentLock.layerHeld({
    command: hold.command,
    wait: Duration.seconds(hold.waitSeconds),
    report: (line) => Console.error(`kern: ${line}`)
  })

/**
 * Config, kern.db, the kernel and the tools' services, with no tool registered yet. A turn runner passes `hold`:
 * the folder's lock is taken before kern.db is opened and released after everything above it has closed.
 */
const kernelCoreLayer = (dir: string, hold?: HoldFolder) => {
  const config = hold === undefined
    ? configLayer(dir)
    : heldLockLayer(hold).pipe(Layer.provideMerge(configLayer(dir)))
  const database = databaseLayer.pipe(Layer.provideMerge(config))
  const kernel = Kernel.layerFromConfig.pipe(Layer.provideMerge(database))
  return Layer.mergeAll(ToolServices.layer, PairingStore.Default).pipe(Layer.provideMerge(kernel))
}

/** Config, kern.db and the kernel with the built-in tools registered: what kernel commands run against. */
export const kernelAgentLayer = (dir: string) => Builtins.layer.pipe(Layer.provideMerge(kernelCoreLayer(dir)))

/** kernelAgentLayer with the folder held: what a single turn needs below the model. */
const heldKernelAgentLayer = (dir: string, hold: HoldFolder) =>
  Builtins.layer.pipe(Layer.provideMerge(kernelCoreLayer(dir, hold)))

/**
 * The configured model (over undici) on top of `below`, which must provide the config. The same plain HttpClient is
 * the agent's ambient one, for what is built on the agent (channels); the tools' client is guarded under its own Tag.
 */
const withModel = <A, E, R>(below: Layer.Layer<A, E, R>) =>
  Provider.layer.pipe(Layer.provideMerge(NodeHttpClient.layerUndici), Layer.provideMerge(below))

/**
 * Everything a turn needs, with the folder held: the kernel and tools, the configured model, sessions, the queue
 * and the turn runner.
 */
export const agentRuntimeLayer = (dir: string, hold: HoldFolder) => {
  return AgentLive.layer.pipe(Layer.provideMerge(withModel(heldKernelAgentLayer(dir, hold))))
}

/**
 * The long-running agent, with the folder held: as agentRuntimeLayer, plus the AgentRuntime; the built-in tools are registered once it
 * exists, so the `kern` tool reports its live session and queue.
 */
export const runningAgentLayer = (dir: string, hold: HoldFolder) => {
  const runtime = AgentRuntime.Default.pipe(
    Layer.provideMerge(AgentLive.layer),
    Layer.provideMerge(withModel(kernelCoreLayer(dir, hold)))
  )
  const liveInfo = RuntimeInfo.layerWith(Effect.map(AgentRuntime, (agent) => ({
    queueLength: Effect.map(agent.status, (status) => status.queued),
    session: Effect.flatMap(agent.currentSession, (session) =>
      Effect.map(RuntimeInfo.sessionFigures(session.id, session.messages), Option.some))
  })))
  return Builtins.layerWith(liveInfo).pipe(Layer.provideMerge(runtime))
}
