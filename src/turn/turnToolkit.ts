import type { Toolkit } from "@effect/ai"
import { Effect, Ref } from "effect"
import { toolkitFor } from "../kernel/aiTools.js"
import type { RegisteredTool } from "../kernel/ToolRegistry.js"
import { toolDefinitionsTokens } from "../context/toolTokens.js"
import { promptToolsOf } from "../context/systemPrompt.js"

const makeToolkit = (tools: ReadonlyArray<RegisteredTool>, count: (text: string) => number) => {
  const { toolIdOf, toolkit } = toolkitFor(tools)
  const withHandler: Toolkit.WithHandler<any> = {
    tools: toolkit.tools,
    // Tool calls are resolved by the kernel's executor, never by @effect/ai.
    handle: () => Effect.die("kern resolves tool calls through its executor")
  }
  const tokens = toolDefinitionsTokens(Object.values(toolkit.tools), count)
  const promptTools = promptToolsOf(tools)
  return { toolIdOf, withHandler, tokens, promptTools }
}

/** The tools a turn offers the model, as @effect/ai's toolkit, what their definitions cost and how the prompt lists them. */
export type TurnToolkit = ReturnType<typeof makeToolkit>

/**
 * The toolkit of a set of tools. Building one renders every tool's JSON Schema: it is made again only when the offered
 * tools change (one toolkit per scope users have, at most three; eight are kept).
 */
export const makeToolkitCache = (count: (text: string) => number) =>
  Effect.map(Ref.make(new Map<string, TurnToolkit>()), (toolkitCache) => (tools: ReadonlyArray<RegisteredTool>) =>
    Ref.modify(toolkitCache, (cached): readonly [TurnToolkit, Map<string, TurnToolkit>] => {
      const key = tools.map((tool) => tool.fingerprint).join(",")
      const hit = cached.get(key)
      if (hit !== undefined) return [hit, cached]
      const value = makeToolkit(tools, count)
      const next = new Map(cached.size >= 8 ? [] : cached)
      return [value, next.set(key, value)]
    }))
