/** Whether `toolId` is `pattern`, where `*` in the pattern stands for any run of characters (`mcp.github.*`). */
export const matchesToolPattern = (pattern: string, toolId: string): boolean => {
  if (!pattern.includes("*")) return pattern === toolId
  const parts = pattern.split("*")
  const first = parts[0] ?? ""
  const last = parts[parts.length - 1] ?? ""
  if (toolId.length < first.length + last.length || !toolId.startsWith(first) || !toolId.endsWith(last)) return false
  // The middle pieces in order, each after the one before, none overlapping the fixed end.
  let at = first.length
  const end = toolId.length - last.length
  for (const part of parts.slice(1, -1)) {
    const found = toolId.indexOf(part, at)
    if (found < 0 || found + part.length > end) return false
    at = found + part.length
  }
  return true
}

/** Whether any of `patterns` matches `toolId`. */
export const matchesAnyToolPattern = (patterns: Iterable<string>, toolId: string): boolean => {
  for (const pattern of patterns) if (matchesToolPattern(pattern, toolId)) return true
  return false
}
