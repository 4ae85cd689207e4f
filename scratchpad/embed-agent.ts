// A whole kern agent inside another Effect program: load the folder's config, point it at a model server, run a turn.
// Run with: npx tsx scratchpad/embed-agent.ts <agent-dir> <model-base-url> "<message>"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect } from "effect"
import { Agent, AgentConfig, ProcessEnv } from "../src/index.js"

const [dir = ".", baseURL, text = "hello"] = process.argv.slice(2)

const program = Effect.gen(function*() {
  const loaded = yield* AgentConfig.loadConfig(dir).pipe(
    Effect.provideService(ProcessEnv, process.env),
    Effect.provide(NodeContext.layer)
  )
  const config = baseURL === undefined ? loaded : { ...loaded, config: { ...loaded.config, baseURL } }
  const outcome = yield* Agent.send(text, {
    onEvent: (event) => event.type === "tool-call" ? Console.error(`→ ${event.name}`) : Effect.void
  }).pipe(Effect.provide(Agent.layerFromConfig(config, { env: process.env })))
  yield* Console.log(outcome.reply)
  yield* Console.log(`(${outcome.steps} steps, ${outcome.usage.inputTokens} tokens in)`)
})

program.pipe(NodeRuntime.runMain)
