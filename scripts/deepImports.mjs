// An esbuild plugin for the quick bundles (scripts/build.mjs): kern's sources import effect's modules through their
// package's index (`import { Effect, Schema } from "effect"`), which re-exports every module of the package. In a
// bundle that loads part of its code later (`import()`, as `kern status` does for kern.db and the running agent),
// esbuild evaluates such an index whole at the first import, with every module it names (effect's test services,
// @effect/platform's MsgPack and the native msgpackr it loads, …). Importing each module by its own path instead
// leaves them out, as the bundle without a later part did.
import { readFile } from "node:fs/promises"

/** The packages whose index re-exports each module as a namespace (`export * as Effect from "./Effect.js"`). */
const namespaced = ["effect", "@effect/platform", "@effect/sql", "@effect/experimental", "@effect/ai"]
/** The names effect's index exports from effect/Function rather than as a module. */
const fromFunction = new Set(["absurd", "flow", "hole", "identity", "pipe", "unsafeCoerce"])

const importFrom = new RegExp(`import\\s*\\{([^}]*)\\}\\s*from\\s*"(${namespaced.map((name) => name.replace("/", "\\/")).join("|")})"`, "g")

/** `import { A, type B, C as D } from "pkg"` as `import * as A from "pkg/A"; import * as D from "pkg/C"`. */
export const deepen = (source) =>
  source.replace(importFrom, (statement, names, pkg) => {
    const values = names.split(",").map((name) => name.trim()).filter((name) => name !== "" && !name.startsWith("type "))
    return values.map((name) => {
      const [imported, local = imported] = name.split(/\s+as\s+/)
      return pkg === "effect" && fromFunction.has(imported)
        ? `import { ${imported} as ${local} } from "effect/Function"`
        : `import * as ${local} from "${pkg}/${imported}"`
    }).join("; ")
  })

export const deepImports = {
  name: "deep-imports",
  setup(build) {
    build.onLoad({ filter: /[/\\]src[/\\].*\.tsx?$/ }, async (args) =>
      /[/\\]node_modules[/\\]/.test(args.path)
        ? undefined
        : { contents: deepen(await readFile(args.path, "utf8")), loader: args.path.endsWith(".tsx") ? "tsx" : "ts" })
  }
}
