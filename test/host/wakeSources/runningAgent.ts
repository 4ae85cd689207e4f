import * as NodeContext from "@effect/platform-node/NodeContext"
import { Layer } from "effect"
import * as ChatChannels from "../../../src/channels/chatChannels.js"
import { ProcessEnv } from "../../../src/config/ProcessEnv.js"
import * as Layers from "../../../src/runtime/layers.js"

/** What a host builds when it wakes an agent: its running layers with its chat channels, no server of its own. */
export const runningAgent = (dir: string) =>
  Layers.runningAgentLayerWith(dir, { command: "kern serve", waitSeconds: 0 }, ChatChannels.layer).pipe(
    Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })),
    Layer.provide(NodeContext.layer)
  )
