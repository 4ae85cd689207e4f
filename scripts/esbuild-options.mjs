// The esbuild options of the shipped bundle, shared by the build and the benchmarks (which measure the code as it
// ships: minified, without the name-keeping wrappers a development transform adds to every function).
import { deepImports } from "./deepImports.mjs"
import { undiciGlobals } from "./undiciGlobals.mjs"

// sharp loads its platform's native build (@img/sharp-<platform>) at run time: it cannot be bundled.
export const external = ["better-sqlite3", "sqlite-vec", "sharp"]

/** @type {import("esbuild").BuildOptions} */
export const shipped = {
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minify: true,
  sourcemap: true,
  external,
  // A bundle that adds plugins of its own keeps these (scripts/build.mjs `withShippedPlugins`).
  plugins: [undiciGlobals],
  logLevel: "warning",
  // The dependencies' license comments go to `<file>.LEGAL.txt` beside each file that had some, linked from its last
  // line: one of them has a non-ASCII letter, and a single such character makes V8 hold the whole file's text at two
  // bytes a character (16 MB instead of 8 for the full CLI, and slower to read). test/package/asciiBundles.test.ts
  // keeps every file ASCII.
  legalComments: "linked",
  banner: {
    // Bundled CommonJS dependencies call require() and read __dirname; give ESM chunks both.
    js: [
      "import { createRequire as __kernCreateRequire } from 'node:module';",
      "import { fileURLToPath as __kernFileURLToPath } from 'node:url';",
      "import { dirname as __kernDirname } from 'node:path';",
      "const require = __kernCreateRequire(import.meta.url);",
      "const __filename = __kernFileURLToPath(import.meta.url);",
      "const __dirname = __kernDirname(__filename);"
    ].join(" ")
  }
}

/** The shipped options for a CommonJS bundle: the banner gives ES module chunks what CommonJS already has. */
const { banner: _esmOnly, ...withoutBanner } = shipped
export const commonJs = withoutBanner

/**
 * A CommonJS bundle bin/kern.js runs as a vm.Script with a V8 code cache (bin/codeCache.js), its later parts inside
 * it: the full CLI (dist/main.cjs) and the one-shot chat (dist/quickChatLocal.cjs), and the benches that time what
 * they run. `import.meta.url` is the bundle's own URL, as it is a chunk's in dist/.
 */
export const cachedScript = {
  ...commonJs,
  format: "cjs",
  plugins: [...shipped.plugins, deepImports],
  // A vm.Script cannot import() (node 20 has no loader for it without a flag): the external packages a later part
  // imports (sharp) are required instead, and kern's own later parts are evaluated when their import() runs.
  supported: { "dynamic-import": false },
  banner: { js: "const __kernImportMetaUrl = require(\"node:url\").pathToFileURL(__filename).href;" },
  define: { "import.meta.url": "__kernImportMetaUrl" }
}
