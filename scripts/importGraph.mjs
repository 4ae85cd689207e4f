// Keeps src/'s dependencies one-way. Each folder of src/ sits in a layer; a file may import its own folder, a folder of
// a lower layer, or another folder of its own layer, never a higher one, and no two folders may reach each other
// (a cycle between folders, even within one layer). Lowest first:
//
//   config ← storage ← kernel ← session, model, users ← tools, recall, context, memory ← mcp, skills, backup, importers ← turn ← agent, runtime
//   ← channels ← host ← cli ← quick ← src/*.ts
//
// `turn` is one turn (the queue it draws from, the runner, the model step); `runtime` the long-lived agent over it;
// `agent` the library's Agent, built on the runtime's layers (so runtime never imports agent). `users` is who may do what (the users file, pairing): built on the
// config, kern.db and the kernel's tool scopes, asked by the tools, the turn and the channels, asking nothing of them.
// `mcp` is MCP both ways: other servers' tools registered in the kernel beside the built-in ones, and `kern mcp serve`.
// The files at src/'s top (main.ts, index.ts, quick.ts) wire everything and sit above cli; so do src/quick/'s, the
// bundles bin/kern.js loads for the commands that must answer at once (help, status, chat through a running agent).
// A folder that is not placed is reported too, so a new subsystem is given its place on purpose.
//
// Type-only imports count: they are coupling all the same (a moved type drags its folder along). The web UI
// (src/channels/web/ui) is its own bundle with its own tsconfig and is left out.
//
// Imports are read with TypeScript's own pre-processor (static, `export … from`, `import type`, `import("…")` calls and
// types), so comments, strings and regular expressions never count. Run: `node scripts/importGraph.mjs [srcDir]` (exit 1
// on a violation); `npm run check` runs it.
import { readdirSync, readFileSync, statSync } from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

export const layers = [
  ["config"],
  ["storage"],
  ["kernel"],
  ["session", "model", "users", "media"],
  ["tools", "recall", "context", "memory"],
  ["mcp", "skills", "backup", "importers"],
  ["turn"],
  ["agent", "runtime"],
  ["channels"],
  ["host"],
  ["cli"],
  ["quick"],
  ["."]
]

export const excluded = ["channels/web/ui"]

const sourceFile = /\.tsx?$/

const listFiles = (root, dir, skip) =>
  readdirSync(NodePath.join(root, dir), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1)).flatMap((entry) => {
    const path = dir === "" ? entry.name : `${dir}/${entry.name}`
    if (skip.includes(path)) return []
    if (entry.isDirectory()) return listFiles(root, path, skip)
    return entry.isFile() && sourceFile.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : []
  })

const folderOf = (path) => (path.includes("/") ? path.slice(0, path.indexOf("/")) : ".")

// "./x.js" resolves to "x.ts" (or .tsx, or a folder's index); anything not inside src/ is ignored.
const resolve = (root, from, specifier) => {
  const target = NodePath.posix.normalize(NodePath.posix.join(NodePath.posix.dirname(from), specifier))
  if (target.startsWith("..")) return undefined
  const base = target.replace(/\.(m?js|jsx)$/, "")
  const candidates = [base + ".ts", base + ".tsx", target, base + "/index.ts"]
  return candidates.find((candidate) => {
    try {
      return statSync(NodePath.join(root, candidate)).isFile()
    } catch {
      return false
    }
  }) ?? target
}

/** The imports of every source file under `root` (a src/ folder), as edges between files and between folders. */
export const readGraph = (root, options = {}) => {
  const skip = options.excluded ?? excluded
  const files = listFiles(root, "", skip)
  const edges = []
  for (const file of files) {
    const text = readFileSync(NodePath.join(root, file), "utf8")
    const { importedFiles } = ts.preProcessFile(text, true, true)
    for (const imported of importedFiles) {
      if (!imported.fileName.startsWith(".")) continue
      const target = resolve(root, file, imported.fileName)
      if (target === undefined) continue
      const line = text.slice(0, imported.pos).split("\n").length
      edges.push({ from: file, to: target, line, fromFolder: folderOf(file), toFolder: folderOf(target) })
    }
  }
  return { files, edges }
}

// Tarjan's strongly connected components over the folder graph: every component of two or more folders is a cycle.
const cyclesOf = (folders, next) => {
  const index = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const components = []
  let counter = 0
  const visit = (folder) => {
    index.set(folder, counter)
    low.set(folder, counter)
    counter += 1
    stack.push(folder)
    onStack.add(folder)
    for (const target of next.get(folder) ?? []) {
      if (!index.has(target)) {
        visit(target)
        low.set(folder, Math.min(low.get(folder), low.get(target)))
      } else if (onStack.has(target)) low.set(folder, Math.min(low.get(folder), index.get(target)))
    }
    if (low.get(folder) === index.get(folder)) {
      const component = []
      let member
      do {
        member = stack.pop()
        onStack.delete(member)
        component.push(member)
      } while (member !== folder)
      if (component.length > 1) components.push(component.sort())
    }
  }
  for (const folder of folders) if (!index.has(folder)) visit(folder)
  return components
}

/** Upward imports, folder cycles and unplaced folders of a graph read by `readGraph`. */
export const check = (graph, order = layers) => {
  const rank = new Map(order.flatMap((tier, position) => tier.map((folder) => [folder, position])))
  const folders = [...new Set(graph.files.map(folderOf))].sort()
  const unplaced = folders.filter((folder) => !rank.has(folder))
  const crossing = graph.edges.filter((edge) => edge.fromFolder !== edge.toFolder)
  const upward = crossing.filter(
    (edge) => rank.has(edge.fromFolder) && rank.has(edge.toFolder) && rank.get(edge.toFolder) > rank.get(edge.fromFolder)
  )
  const next = new Map()
  for (const edge of crossing) next.set(edge.fromFolder, new Set([...(next.get(edge.fromFolder) ?? []), edge.toFolder]))
  // A cycle's downward imports are as they should be: what closes it is an import upward or across one layer.
  const downward = (edge) => rank.has(edge.fromFolder) && rank.has(edge.toFolder) && rank.get(edge.toFolder) < rank.get(edge.fromFolder)
  const cycles = cyclesOf(folders, next).map((component) => ({
    folders: component,
    edges: crossing.filter((edge) => component.includes(edge.fromFolder) && component.includes(edge.toFolder) && !downward(edge))
  }))
  return { unplaced, upward, cycles, ok: unplaced.length === 0 && upward.length === 0 && cycles.length === 0 }
}

const where = (edge) => `src/${edge.from}:${edge.line} → src/${edge.to}`
const named = (folder) => (folder === "." ? "src/*.ts" : folder)

/** The report a person reads: one line per violation, grouped. */
export const describe = (result, order = layers) => {
  const lines = []
  for (const folder of result.unplaced) {
    lines.push(`unplaced folder: src/${folder} has no layer (add it to \`layers\` in scripts/importGraph.mjs)`)
  }
  for (const edge of result.upward) lines.push(`upward import (${named(edge.fromFolder)} → ${named(edge.toFolder)}): ${where(edge)}`)
  for (const cycle of result.cycles) {
    lines.push(`folder cycle: ${cycle.folders.map(named).join(" ↔ ")}`)
    for (const edge of cycle.edges) lines.push(`  ${where(edge)}`)
  }
  if (result.ok) lines.push(`imports one-way: ${order.map((tier) => tier.map(named).join(", ")).join(" ← ")}`)
  return lines.join("\n")
}

const main = () => {
  const root = process.argv[2] ?? fileURLToPath(new URL("../src/", import.meta.url))
  const result = check(readGraph(root))
  const report = describe(result)
  if (result.ok) {
    console.log(report)
    return 0
  }
  console.error(report)
  console.error(
    `${result.upward.length} upward import(s), ${result.cycles.length} folder cycle(s), ${result.unplaced.length} unplaced folder(s)`
  )
  return 1
}

if (process.argv[1] !== undefined && NodePath.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main()
}
