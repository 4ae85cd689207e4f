/** Plain YAML for status output: mappings, sequences and scalars, strings quoted only when YAML would misread them. */

const plain = /^[A-Za-z0-9_./@(][A-Za-z0-9 _./@()+,~%-]*$/
const words = /^(true|false|yes|no|y|n|on|off|null|~|[-+]?\.(inf|nan))$/i

/** Text a YAML reader would take for a boolean, null, number or date rather than a string. */
const reserved = (text: string): boolean =>
  words.test(text) || /^0[xob]/i.test(text) || /^\d{4}-\d\d-\d\d/.test(text) ||
  (text.trim() !== "" && Number.isFinite(Number(text.replace(/_/g, ""))))

const scalar = (value: unknown): string => {
  if (value === null || value === undefined) return "null"
  if (typeof value === "number" || typeof value === "boolean") return String(value)
  const text = String(value)
  return plain.test(text) && !reserved(text) && !text.endsWith(" ") ? text : JSON.stringify(text)
}

const isMapping = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const lines = (value: unknown, indent: string): Array<string> => {
  if (Array.isArray(value)) {
    if (value.length === 0) return [`${indent}[]`]
    return value.flatMap((item) => {
      if (isMapping(item) || Array.isArray(item)) {
        const [first = "", ...rest] = lines(item, `${indent}  `)
        return [`${indent}- ${first.trimStart()}`, ...rest]
      }
      return [`${indent}- ${scalar(item)}`]
    })
  }
  if (isMapping(value)) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined)
    if (entries.length === 0) return [`${indent}{}`]
    return entries.flatMap(([key, v]) =>
      (isMapping(v) && Object.keys(v).length > 0) || (Array.isArray(v) && v.length > 0)
        ? [`${indent}${scalar(key)}:`, ...lines(v, `${indent}  `)]
        : [`${indent}${scalar(key)}: ${lines(v, "")[0] ?? ""}`]
    )
  }
  return [`${indent}${scalar(value)}`]
}

export const toYaml = (value: unknown): string => lines(value, "").join("\n")
