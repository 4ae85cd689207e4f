// Bundles the kern binary and the library with esbuild. Command modules are split into chunks that
// main.ts imports lazily, so `kern --help` loads only the CLI definition.
import { build } from "esbuild"
import { execFileSync } from "node:child_process"
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { createRequire } from "node:module"
import { shipped } from "./esbuild-options.mjs"

// `--types` also writes the declaration files (dist/types, what package.json's `types` names) with tsc; the test
// setup rebuilds only the bundle, so it keeps them.
const withTypes = process.argv.includes("--types")
const dist = new URL("../dist/", import.meta.url)
const entries = await readdir(dist).catch(() => [])
await Promise.all(
  entries.filter((name) => withTypes || name !== "types").map((name) => rm(new URL(name, dist), { recursive: true, force: true }))
)

await build({
  ...shipped,
  entryPoints: { main: "src/main.ts", index: "src/index.ts" },
  outdir: "dist",
  splitting: true
})

// `kern sessions list` (src/quick.ts) as one CommonJS file, so bin/kern.js can load it with a V8 code cache (node 20
// has no code cache for ES modules). The cache (dist/quick.cjs.v8cache) is written here by the second listing of a
// folder with one session, whose count record the first listing wrote: the common case, so the code it runs is in it.
const { banner: _esmOnly, ...cjsOptions } = shipped
await build({ ...cjsOptions, format: "cjs", entryPoints: ["src/quick.ts"], outfile: "dist/quick.cjs" })
const scratch = await mkdtemp(NodePath.join(tmpdir(), "kern-build-"))
try {
  const id = "20260101-000000-000-0000"
  await mkdir(NodePath.join(scratch, ".kern", "sessions"), { recursive: true })
  await writeFile(NodePath.join(scratch, ".kern", "config.json"), "{}\n")
  await writeFile(
    NodePath.join(scratch, ".kern", "sessions", `${id}.jsonl`),
    [
      { version: 1, id, createdAt: "2026-01-01T00:00:00.000Z", agent: "build", _tag: "session" },
      { text: "hello", toolCalls: [], at: "2026-01-01T00:00:01.000Z", _tag: "assistant" }
    ].map((line) => `${JSON.stringify(line)}\n`).join("")
  )
  const list = () =>
    execFileSync(process.execPath, [fileURLToPath(new URL("../bin/kern.js", import.meta.url)), "sessions", "list", scratch], { stdio: "ignore" })
  list()
  await rm(new URL("quick.cjs.v8cache", dist), { force: true })
  list()
} finally {
  await rm(scratch, { recursive: true, force: true })
}

// The web UI: one minified script and one stylesheet beside index.html, served by kern's own server (no CDN, no inline
// script or style, so the page runs under `Content-Security-Policy: default-src 'self'`).
await mkdir(new URL("web/assets/", dist), { recursive: true })
await build({
  entryPoints: { app: "src/channels/web/ui/main.tsx" },
  outdir: "dist/web/assets",
  bundle: true,
  format: "esm",
  platform: "browser",
  target: ["es2022"],
  minify: true,
  sourcemap: true,
  jsx: "automatic",
  jsxImportSource: "preact",
  tsconfig: "src/channels/web/ui/tsconfig.json",
  legalComments: "linked",
  logLevel: "warning"
})
await copyFile(new URL("../src/channels/web/ui/index.html", import.meta.url), new URL("web/index.html", dist))

if (withTypes) {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { stdio: "inherit", cwd: new URL("..", import.meta.url) })
}
