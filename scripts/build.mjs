// Bundles the kern binary and the library with esbuild. Command modules are split into chunks that
// main.ts imports lazily, so `kern --help` loads only the CLI definition.
import { build } from "esbuild"
import { rm } from "node:fs/promises"

const external = ["better-sqlite3", "sqlite-vec"]

await rm(new URL("../dist", import.meta.url), { recursive: true, force: true })

await build({
  entryPoints: { main: "src/main.ts", index: "src/index.ts" },
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minify: true,
  sourcemap: true,
  external,
  logLevel: "warning",
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
})
