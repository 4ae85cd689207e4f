import type { Toolkit } from "@effect/ai"
import { Effect, Ref } from "effect"
import { modelToolName, toolkitFor } from "../kernel/aiTools.js"
import type { RegisteredTool } from "../kernel/ToolRegistry.js"
import { toolDefinitionsTokens } from "../context/toolTokens.js"
import { promptToolsOf } from "../context/systemPrompt.js"

/**
 * `defined`: the tools whose definitions the request carries; `listed`: every tool the turn offers, each named in the
 * prompt's `<tools>` (with `lazyMcp`, the MCP tools as loaded by tool_search) and known by its function name when
 * the model calls it, loaded or not.
 */
const makeToolkit = (defined: ReadonlyArray<RegisteredTool>, listed: ReadonlyArray<RegisteredTool>, lazyMcp: boolean, count: (text: string) => number) => {
  const { toolkit } = toolkitFor(defined)
  const byName = new Map(listed.map((tool) => [modelToolName(tool.spec.toolId), tool.spec.toolId]))
  const withHandler: Toolkit.WithHandler<any> = {
    tools: toolkit.tools,
    // Tool calls are resolved by the kernel's executor, never by @effect/ai.
    handle: () => Effect.die("kern resolves tool calls through its executor")
  }
  const tokens = toolDefinitionsTokens(Object.values(toolkit.tools), count)
  const promptTools = promptToolsOf(listed, lazyMcp)
  return { toolIdOf: (name: string): string | undefined => byName.get(name), withHandler, tokens, promptTools }
}

/** The tools a turn offers the model, as @effect/ai's toolkit, what their definitions cost and how the prompt lists them. */
export type TurnToolkit = ReturnType<typeof makeToolkit>

/**
 * The toolkit of a set of tools. Building one renders every tool's JSON Schema: it is made again only when the offered
 * tools change (one toolkit per scope users have, and per set of MCP tools a lazy turn loaded; sixteen are kept).
 */
export const makeToolkitCache = (count: (text: string) => number) =>
  Effect.map(Ref.make(new Map<string, TurnToolkit>()), (toolkitCache) =>
    (defined: ReadonlyArray<RegisteredTool>, listed: ReadonlyArray<RegisteredTool> = defined, lazyMcp = false) =>
      Ref.modify(toolkitCache, (cached): readonly [TurnToolkit, Map<string, TurnToolkit>] => {
        const key = `${lazyMcp}|${defined.map((tool) => tool.fingerprint).join(",")}|${
          listed === defined ? "=" : listed.map((tool) => tool.fingerprint).join(",")
        }`
        const hit = cached.get(key)
        if (hit !== undefined) return [hit, cached]
        const value = makeToolkit(defined, listed, lazyMcp, count)
        const next = new Map(cached.size >= 16 ? [] : cached)
        return [value, next.set(key, value)]
      }))
