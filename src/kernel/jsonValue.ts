/** Why a value is not plain JSON (the path to the first offending part), or undefined when it is. */
export const jsonProblem = (value: unknown, path = "value", seen: Set<object> = new Set()): string | undefined => {
  if (value === null || typeof value === "string" || typeof value === "boolean") return undefined
  if (typeof value === "number") return Number.isFinite(value) ? undefined : `${path} is ${value}, which JSON cannot hold`
  if (typeof value !== "object") return `${path} is ${typeof value === "undefined" ? "undefined" : `a ${typeof value}`}`
  if (seen.has(value)) return `${path} refers back to itself (a cycle)`
  seen.add(value)
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const problem = jsonProblem(value[i], `${path}[${i}]`, seen)
        if (problem !== undefined) return problem
      }
      return undefined
    }
    const proto = Object.getPrototypeOf(value)
    if (proto !== Object.prototype && proto !== null) {
      return `${path} is a ${(value as object).constructor?.name ?? "non-plain object"}, not a plain object`
    }
    for (const [key, inner] of Object.entries(value)) {
      const problem = jsonProblem(inner, `${path}.${key}`, seen)
      if (problem !== undefined) return problem
    }
    return undefined
  } finally {
    seen.delete(value)
  }
}
