import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { testDist } from "./build.js"

/** What a chunk of the test build imports: statically (`from"./x.js"`, `import"./x.js"`) and lazily (`import("./x.js")`). */
export const importsOf = (file: string) => {
  const source = NodeFs.readFileSync(NodePath.join(testDist, file), "utf8")
  const names = (pattern: RegExp) => [...source.matchAll(pattern)].map((match) => match[1]!)
  return {
    source,
    static: names(/(?:from|import)\s*"\.\/([^"]+\.js)"/g),
    lazy: names(/import\(\s*"\.\/([^"]+\.js)"\s*\)/g)
  }
}

/** The chunks a process loads when it never builds the lazily loaded `skip`: every import but `import()`s of `skip`. */
export const loadedWithout = (entry: string, skip: (file: string) => boolean): ReadonlySet<string> => {
  const seen = new Set<string>()
  const visit = (file: string): void => {
    if (seen.has(file)) return
    seen.add(file)
    const { lazy, static: eager } = importsOf(file)
    for (const next of eager) visit(next)
    for (const next of lazy) if (!skip(next)) visit(next)
  }
  visit(entry)
  return seen
}

/** Every JavaScript chunk of the test build. */
export const chunks = () => NodeFs.readdirSync(testDist).filter((file) => file.endsWith(".js"))
