// Bundles the kern binary and the library with esbuild. Command modules are split into chunks that
// main.ts imports lazily, so `kern --help` loads only the CLI definition.
import { build } from "esbuild"
import { rm } from "node:fs/promises"
import { shipped } from "./esbuild-options.mjs"

await rm(new URL("../dist", import.meta.url), { recursive: true, force: true })

await build({
  ...shipped,
  entryPoints: { main: "src/main.ts", index: "src/index.ts" },
  outdir: "dist",
  splitting: true
})
