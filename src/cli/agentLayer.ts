import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Console, Context, Effect, Layer, Option } from "effect"
import * as AgentLive from "../agent/AgentLive.js"
import { AgentRuntime } from "../agent/AgentRuntime.js"
import { PairingStore } from "../channels/PairingStore.js"
import * as AgentConfig from "../config/AgentConfig.js"
import * as Kernel from "../kernel/Kernel.js"
import * as Provider from "../model/Provider.js"
import * as Database from "../storage/Database.js"
import * as Builtins from "../tools/builtins.js"
import * as RuntimeInfo from "../tools/RuntimeInfo.js"
import * as ToolServices from "../tools/ToolServices.js"
import { UsageError } from "./errors.js"

/** The agent folder's config, printing its warnings once; refuses a folder that `kern init` has not set up. */
const configLayer = (dir: string) =>
  Layer.tap(AgentConfig.layer(dir), (context) =>
    Effect.gen(function*() {
      const loaded = Context.get(context, AgentConfig.AgentConfig)
      if (!loaded.fileExists) {
        return yield* new UsageError({ message: `${dir} is not an agent folder (no .kern/config.json); run \`kern init ${dir}\` first` })
      }
      for (const warning of loaded.warnings) yield* Console.error(`kern: warning: ${warning}`)
    }))

const databaseLayer = Layer.unwrapEffect(
  Effect.map(AgentConfig.AgentConfig, ({ paths }) => Database.layer({ filename: paths.dbFile }))
)

/** Config, kern.db, the kernel and the tools' services, with no tool registered yet. */
const kernelCoreLayer = (dir: string) => {
  const config = configLayer(dir)
  const database = databaseLayer.pipe(Layer.provideMerge(config))
  const kernel = Kernel.layerFromConfig.pipe(Layer.provideMerge(database))
  return Layer.mergeAll(ToolServices.layer, PairingStore.Default).pipe(Layer.provideMerge(kernel))
}

/** Config, kern.db and the kernel with the built-in tools registered: what kernel commands run against. */
export const kernelAgentLayer = (dir: string) => Builtins.layer.pipe(Layer.provideMerge(kernelCoreLayer(dir)))

/** The configured model (over undici) on top of `below`, which must provide the config. */
const withModel = <A, E, R>(below: Layer.Layer<A, E, R>) =>
  Provider.layer.pipe(Layer.provide(NodeHttpClient.layerUndici), Layer.provideMerge(below))

/** Everything a turn needs: the kernel and tools, the configured model, sessions, the queue and the turn runner. */
export const agentRuntimeLayer = (dir: string) => {
  return AgentLive.layer.pipe(Layer.provideMerge(withModel(kernelAgentLayer(dir))))
}

/**
 * The long-running agent: as agentRuntimeLayer, plus the AgentRuntime; the built-in tools are registered once it
 * exists, so the `kern` tool reports its live session and queue.
 */
export const runningAgentLayer = (dir: string) => {
  const runtime = AgentRuntime.Default.pipe(
    Layer.provideMerge(AgentLive.layer),
    Layer.provideMerge(withModel(kernelCoreLayer(dir)))
  )
  const liveInfo = RuntimeInfo.layerWith(Effect.map(AgentRuntime, (agent) => ({
    queueLength: Effect.map(agent.status, (status) => status.queued),
    session: Effect.flatMap(agent.currentSession, (session) =>
      Effect.map(session.writer.stats, (stats) => Option.some({ id: session.id, ...stats })))
  })))
  return Builtins.layerWith(liveInfo).pipe(Layer.provideMerge(runtime))
}
