import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { testDist } from "./build.js"

interface Metafile {
  readonly inputs: Record<string, { readonly imports: ReadonlyArray<{ readonly path: string; readonly kind: string; readonly external?: boolean }> }>
}

/**
 * The modules of a CommonJS bundle of the test build (`dist/<name>.cjs`) and what each imports, from the metafile the
 * build writes beside it (`dist/<name>.meta.json`): paths as esbuild names them (`src/cli/run.ts`,
 * `node_modules/@effect/cluster/dist/esm/Sharding.js`).
 */
export const bundleModules = (name: string): Metafile["inputs"] =>
  (JSON.parse(NodeFs.readFileSync(NodePath.join(testDist, `${name}.meta.json`), "utf8")) as Metafile).inputs

/**
 * The modules a process evaluates from `entry` when it never runs the `import()` of a module `skip` picks: every
 * import but those. A bundle built without `import()` (dist/main.cjs, dist/quickChatLocal.cjs) evaluates a module
 * that is reached only through `import()` when that `import()` runs: esbuild wraps it in a function the `import()`
 * calls, so this walk is what the process evaluates.
 */
export const evaluatedWithout = (
  modules: Metafile["inputs"],
  entry: string,
  skip: (path: string) => boolean
): ReadonlySet<string> => {
  const seen = new Set<string>()
  const visit = (path: string): void => {
    const module = modules[path]
    if (module === undefined || seen.has(path)) return
    seen.add(path)
    for (const { path: next, kind, external } of module.imports) {
      if (external === true || (kind === "dynamic-import" && skip(next))) continue
      visit(next)
    }
  }
  visit(entry)
  return seen
}

/** The modules something in the bundle imports with `import()`. */
export const lazilyImported = (modules: Metafile["inputs"]): ReadonlySet<string> =>
  new Set(Object.values(modules).flatMap(({ imports }) => imports.filter(({ kind }) => kind === "dynamic-import").map(({ path }) => path)))
