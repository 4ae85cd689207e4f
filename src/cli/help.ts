import * as CliConfig from "@effect/cli/CliConfig"
import * as HelpDoc from "@effect/cli/HelpDoc"
import type * as Span from "@effect/cli/HelpDoc/Span"
import * as Usage from "@effect/cli/Usage"
import * as Option from "effect/Option"

// @effect/cli's own help prints `$ chat`, colours whatever the terminal, and pads every entry with generic
// sentences; kern renders the same documentation itself, as a user reads it.

/** One command of the `kern` tree, by its full path (`kernel exec`). */
export interface CommandDoc {
  readonly description: string
  readonly usage: () => Usage.Usage
  readonly help: (config: CliConfig.CliConfig) => HelpDoc.HelpDoc
  /** A command with subcommands that also runs on its own (`kern users` lists): not a bare group. */
  readonly runsAlone?: boolean
}

/** Sentences @effect/cli adds to every entry; the entry's own description says more. */
const boilerplate: ReadonlySet<string> = new Set([
  "A user-defined piece of text.",
  "This setting is optional.",
  "A true or false value.",
  "An integer.",
  "A floating point number."
])

const spanText = (span: Span.Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
    default:
      return spanText(span.value)
  }
}

interface Entry {
  readonly term: string
  readonly lines: ReadonlyArray<string>
}

interface Sections {
  readonly description: Array<string>
  readonly arguments: Array<Entry>
  readonly options: Array<Entry>
}

const paragraphs = (doc: HelpDoc.HelpDoc): Array<string> => {
  switch (doc._tag) {
    case "Paragraph": {
      const text = spanText(doc.value).trim()
      return text === "" || boilerplate.has(text) || text.startsWith("One of the following:") ? [] : [text.replace(/ This argument must be repeated .*$/, "")]
    }
    case "Sequence":
      return [...paragraphs(doc.left), ...paragraphs(doc.right)]
    case "Enumeration":
      return doc.elements.flatMap(paragraphs)
    default:
      return []
  }
}

const collect = (doc: HelpDoc.HelpDoc, sections: Sections, header: { current: string }): void => {
  switch (doc._tag) {
    case "Sequence":
      collect(doc.left, sections, header)
      collect(doc.right, sections, header)
      return
    case "Header":
      header.current = spanText(doc.value).trim().toUpperCase()
      return
    case "Paragraph":
      if (header.current === "DESCRIPTION") sections.description.push(...paragraphs(doc))
      return
    case "DescriptionList": {
      const target = header.current === "ARGUMENTS" ? sections.arguments : header.current === "OPTIONS" ? sections.options : undefined
      for (const [term, inner] of doc.definitions) {
        target?.push({ term: spanText(term).trim().replace(/^\((.*)\)$/, "$1"), lines: paragraphs(inner) })
      }
      return
    }
    default:
      return
  }
}

/**
 * A usage as kern prints it: a positional argument that takes one of a few words is those words (`read|write|full`),
 * not its name followed by them (`<scope> read | write | full`, which reads as four arguments).
 */
export const plainUsage = (usage: Usage.Usage): Usage.Usage => {
  switch (usage._tag) {
    case "Named":
      return usage.names.every((name) => name.startsWith("<")) && Option.isSome(usage.acceptedValues)
        ? Usage.named([usage.acceptedValues.value.split(" | ").join("|")], Option.none())
        : usage
    case "Optional":
      return Usage.optional(plainUsage(usage.usage))
    case "Repeated":
      return Usage.repeated(plainUsage(usage.usage))
    case "Alternation":
      return Usage.alternation(plainUsage(usage.left), plainUsage(usage.right))
    case "Concat":
      return Usage.concat(plainUsage(usage.left), plainUsage(usage.right))
    default:
      return usage
  }
}

const usageLines = (name: string, usage: Usage.Usage): Array<string> =>
  Usage.enumerate(usage, CliConfig.defaultConfig).map((span) =>
    `kern ${[name, spanText(span).replace(/^\S+\s*/, "")].filter((part) => part !== "").join(" ")}`
  )

export interface RenderOptions {
  readonly color: boolean
}

const table = (entries: ReadonlyArray<Entry>): Array<string> => {
  const width = Math.min(28, Math.max(...entries.map((entry) => entry.term.length)))
  return entries.map(({ lines, term }) => {
    const text = lines.join(" ")
    return term.length > width ? `  ${term}\n  ${" ".repeat(width)}  ${text}` : `  ${term.padEnd(width)}  ${text}`
  })
}

/** The help of `kern <name>` (`name` "" for kern itself) with its subcommands, plain or with bold headings. */
export const renderHelp = (
  name: string,
  docs: Readonly<Record<string, CommandDoc>>,
  version: string,
  options: RenderOptions
): string => {
  const heading = (text: string) => (options.color ? `\u001b[1m${text}\u001b[0m` : text)
  const doc = docs[name]
  const sections: Sections = { description: [], arguments: [], options: [] }
  if (doc !== undefined) collect(doc.help(CliConfig.make({ showBuiltIns: false })), sections, { current: "" })
  const children = Object.entries(docs).filter(([path]) =>
    path !== name && path.startsWith(name === "" ? "" : `${name} `) && !path.slice(name.length).trim().includes(" ")
  )
  const out: Array<string> = [name === "" ? `kern ${version}` : `kern ${name}`, ""]
  if (sections.description.length > 0) out.push(...sections.description, "")
  out.push(heading("Usage"))
  // A command that also runs alone (`kern users`) shows how, besides its subcommands.
  if (children.length > 0 && doc?.runsAlone === true) out.push(`  kern ${name} [dir] [options]`)
  if (children.length > 0) out.push(`  kern ${name === "" ? "" : `${name} `}<command> [options]`)
  else if (doc !== undefined) out.push(...usageLines(name, doc.usage()).map((line) => `  ${line}`))
  out.push("")
  if (children.length > 0) {
    out.push(heading("Commands"))
    out.push(...table(children.map(([path, child]) => ({ term: path, lines: [child.description] }))), "")
  }
  if (sections.arguments.length > 0) out.push(heading("Arguments"), ...table(sections.arguments), "")
  const builtIns: Array<Entry> = [
    { term: "-h, --help", lines: ["show this help"] },
    ...(name === "" ? [{ term: "--version", lines: ["print kern's version"] }] : [])
  ]
  out.push(heading("Options"), ...table([...sections.options, ...builtIns]), "")
  if (children.length > 0) out.push(`Run \`kern ${name === "" ? "" : `${name} `}<command> --help\` for a command's options.`)
  return out.join("\n").trimEnd()
}

/** The command path a command line names (`kernel exec` for `kern kernel exec read --args {}`), "" for none. */
export const commandPath = (argv: ReadonlyArray<string>, docs: Readonly<Record<string, unknown>>): string => {
  let path = ""
  for (const arg of argv) {
    if (arg.startsWith("-")) continue
    const next = path === "" ? arg : `${path} ${arg}`
    if (!Object.hasOwn(docs, next)) break
    path = next
  }
  return path
}
