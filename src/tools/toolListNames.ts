import type { KernConfig } from "../config/schema.js"
import { didYouMean } from "../config/didYouMean.js"
import { matchesAnyToolPattern } from "../kernel/toolPatterns.js"

/**
 * The config's `tools.allow` and `tools.block` entries that name no tool kern knows, each as a warning naming it (and
 * what it was likely meant to be). Known: the built-in tools (registered or not under this toolScope), the tools the
 * registry holds (an embedding app's own), and any `mcp.<server>.…` of a configured server, whose tools are listed
 * only once it connects. A warning, not an error: the entry is kept and the policy applies it as written.
 */
export const unknownToolNames = (
  tools: KernConfig["tools"],
  mcpServers: Readonly<Record<string, unknown>>,
  knownIds: ReadonlyArray<string>
): ReadonlyArray<string> => {
  const lists = [["allow", tools.allow ?? []], ["block", tools.block]] as const
  const servers = Object.keys(mcpServers)
  const warnings: Array<string> = []
  for (const [list, patterns] of lists) {
    for (const pattern of patterns) {
      if (knownIds.some((id) => matchesAnyToolPattern([pattern], id))) continue
      if (servers.some((server) => pattern.startsWith(`mcp.${server}.`) || pattern === `mcp.${server}*`)) continue
      const guess = didYouMean(pattern, knownIds)
      warnings.push(
        `tools.${list}: "${pattern}" names no tool${guess === undefined ? "" : ` (did you mean "${guess}"?)`}; ` +
          `tool ids are listed by \`kern kernel tools\``
      )
    }
  }
  return warnings
}
