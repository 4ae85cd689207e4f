// Bundles the kern binary and the library with esbuild: the full CLI and the quick commands as CommonJS bundles
// bin/kern.js loads with a V8 code cache (a command's modules are evaluated when main.ts imports them), the library as
// ES modules with chunks.
import { build } from "esbuild"
import { execFileSync } from "node:child_process"
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { createRequire } from "node:module"
import { deepImports } from "./deepImports.mjs"
import { fingerprint } from "./buildInputs.mjs"
import { cachedScript, commonJs, shipped } from "./esbuild-options.mjs"

// `--types` also writes the declaration files (dist/types, what package.json's `types` names) with tsc.
// `--out DIR` builds a kern of its own into DIR (DIR/bin/kern.js and DIR/dist/) and leaves the repo's dist/ alone: the
// tests and the benchmarks run such a copy, so a `kern` started from the repo meanwhile never finds its build missing.
// `--if-changed` builds only when the sources changed since the last build into the same place (dist/inputs.sha256):
// npm's prepare uses it, because `npm link` and `npx` run prepare again in the checkout `npm install` just built.
const withTypes = process.argv.includes("--types")
const outFlag = process.argv.indexOf("--out")
const root = new URL("../", import.meta.url)
const out = outFlag === -1 ? root : pathToFileURL(`${NodePath.resolve(process.argv[outFlag + 1] ?? "")}/`)
const separate = out.href !== root.href
const dist = new URL("dist/", out)
const stamp = new URL("inputs.sha256", dist)
const inputs = fingerprint(fileURLToPath(root), withTypes ? "with types" : "")
if (process.argv.includes("--if-changed") && (await readFile(stamp, "utf8").catch(() => "")) === inputs) {
  console.log(`kern: the build in ${fileURLToPath(dist)} is up to date with the sources`)
  process.exit(0)
}
const entries = await readdir(dist).catch(() => [])
await Promise.all(
  entries.filter((name) => withTypes || name !== "types").map((name) => rm(new URL(name, dist), { recursive: true, force: true }))
)
if (separate) {
  await mkdir(new URL("bin/", out), { recursive: true })
  for (const file of ["kern.js", "codeCache.js", "package.json"]) await copyFile(new URL(`bin/${file}`, root), new URL(`bin/${file}`, out))
}

// The library (src/index.ts): ES modules, its lazily imported parts as chunks of their own.
await build({
  ...shipped,
  entryPoints: { index: "src/index.ts" },
  outdir: fileURLToPath(dist),
  absWorkingDir: fileURLToPath(root),
  splitting: true
})

// `kern sessions list` (src/quick.ts) as one CommonJS file, so bin/kern.js can load it with a V8 code cache (node 20
// has no code cache for ES modules). The cache (dist/quick.cjs.v8cache) is written here by the second listing of a
// folder with one session, whose count record the first listing wrote: the common case, so the code it runs is in it.
// The paired users' names for that listing (src/quickNames.ts) are a CommonJS file of their own, which quick.cjs loads
// the same way only when a session is not the operator's: the database code stays out of quick.cjs and its cache.
/** The shipped plugins and a bundle's own. */
const withShippedPlugins = (...plugins) => [...shipped.plugins, ...plugins]
for (const name of ["quick", "quickNames"]) {
  await build({
    ...commonJs,
    plugins: withShippedPlugins(deepImports),
    format: "cjs",
    entryPoints: [`src/${name}.ts`],
    outfile: fileURLToPath(new URL(`${name}.cjs`, dist)),
    absWorkingDir: fileURLToPath(root)
  })
}
// `kern --help` and `kern <command> --help` (src/quick/help.ts, dist/quickHelp.cjs) print texts the full CLI rendered
// here once, plain and coloured (dist/help.json, from src/cli/helpTexts.ts): they are fixed by the command definitions.
await build({
  ...commonJs,
  format: "cjs",
  entryPoints: ["src/quick/help.ts"],
  outfile: fileURLToPath(new URL("quickHelp.cjs", dist)),
  absWorkingDir: fileURLToPath(root)
})
// `kern chat` through a running agent (src/quick/chat.ts): the HTTP client without the runtime. Its code cache is
// written by the first chat (bin/kern.js writes a missing cache when the process exits). The metafile says what it
// bundles: test/package/quickBundles.test.ts checks what is among it.
// `kern status` (src/quick/status.ts) the same way. Neither bundle uses the undici package: both talk HTTP with node's
// http module (NodeHttpClient.layer; undici would be half the bundle's size, and node's own fetch, undici built into
// node, adds ~40 MiB to a chat's peak RSS on its first call). So undici, which @effect/platform-node's
// NodeHttpClient module imports for its other layer, is left out of both (an empty module: that layer's code refers to
// it only when it is built, which neither does).
const withoutUndici = {
  name: "without-undici",
  setup(build) {
    build.onResolve({ filter: /^undici$/ }, () => ({ path: "undici", namespace: "without-undici" }))
    build.onLoad({ filter: /.*/, namespace: "without-undici" }, () => ({ contents: "module.exports = {}", loader: "js" }))
  }
}
/**
 * One quick bundle: `src/quick/<entry>.ts` as dist/<name>.cjs, a CommonJS file bin/kern.js loads with a V8 code cache,
 * and its metafile beside it (dist/<name>.meta.json), which test/package/quickBundles.test.ts checks.
 */
const buildQuick = (entry, name, options = {}) => buildCommonJs(`src/quick/${entry}.ts`, name, options)
/** `entry` as dist/<name>.cjs, with its metafile beside it (dist/<name>.meta.json). */
const buildCommonJs = async (entry, name, options = {}) => {
  const bundle = await build({
    ...commonJs,
    format: "cjs",
    ...options,
    entryPoints: [entry],
    outfile: fileURLToPath(new URL(`${name}.cjs`, dist)),
    absWorkingDir: fileURLToPath(root),
    metafile: true
  })
  await writeFile(new URL(`${name}.meta.json`, dist), JSON.stringify(bundle.metafile))
}
await buildQuick("chat", "quickChat", { plugins: withShippedPlugins(withoutUndici, deepImports) })
await buildQuick("status", "quickStatus", { plugins: withShippedPlugins(withoutUndici, deepImports) })
// `kern chat` with no agent serving the folder (src/quick/chatLocal.ts): the turn in the chat's own process, as one
// CommonJS file loaded with a V8 code cache (node 20 has none for ES modules), its later parts (the provider, the
// tokenizer) inside it.
await buildQuick("chatLocal", "quickChatLocal", cachedScript)
// The full CLI (src/main.ts): every command but the quick ones, as one CommonJS file bin/kern.js loads with a V8 code
// cache, as the one-shot chat's. As ES modules (chunks per command, node 20 has no code cache for them) a command
// compiled all the code it ran at every start: 0.45–0.8 s for `kern doctor`, `kern kernel tools` or `kern context
// show`, about 0.2 s of it compiling. A command's later parts (the cluster, the providers, the MCP SDK, OpenTelemetry)
// stay lazy: esbuild evaluates what main.ts imports only through import() when that import() runs, which
// test/package/lazy*.test.ts check on the module graph (dist/main.meta.json).
await buildCommonJs("src/main.ts", "main", cachedScript)
// Which bundle starts a chat (src/quick/chatProbe.ts): plain code, a few KB, no Effect.
await buildQuick("chatProbe", "quickChatProbe")
// `kern status` of a running agent (src/quick/statusAsk.ts): node's http module and a few plain functions, no Effect.
await buildQuick("statusAsk", "quickStatusAsk")
// `kern sessions list` kept from the last ask (src/quick/sessionsAsk.ts): plain code, no Effect.
await buildQuick("sessionsAsk", "quickSessionsAsk")
/**
 * Runs `use` on the module `entry` bundled as the build bundles it (a temporary file in dist/, removed after): for
 * what the build writes from kern's own code.
 */
const withBundled = async (entry, name, use) => {
  const bundled = new URL(name, dist)
  await build({
    ...shipped,
    sourcemap: false,
    legalComments: "none",
    entryPoints: [entry],
    outfile: fileURLToPath(bundled),
    absWorkingDir: fileURLToPath(root)
  })
  try {
    await use(await import(bundled.href))
  } finally {
    await rm(bundled, { force: true })
  }
}
await withBundled("src/cli/helpTexts.ts", "help-renderer.mjs", ({ helpTexts }) =>
  writeFile(new URL("help.json", dist), JSON.stringify(helpTexts())))

// The tokenizer's rank table (src/model/bpeTable.ts) beside the bundles, which read it with one file read instead of
// evaluating gpt-tokenizer's 2.2 MB array of ranks and building its Map (~0.35 s of CPU at every one-shot chat).
await withBundled("src/model/bpeTable.ts", "rank-table-writer.mjs", async ({ buildRankTable, serializeRankTable }) => {
  const { default: ranks } = await import("gpt-tokenizer/bpeRanks/o200k_base")
  await writeFile(new URL("o200k_base.ranks", dist), serializeRankTable(buildRankTable(ranks)))
})

const kernBin = fileURLToPath(new URL("bin/kern.js", out))
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
    execFileSync(process.execPath, [kernBin, "sessions", "list", scratch], { stdio: "ignore" })
  list()
  await rm(new URL("quick.cjs.v8cache", dist), { force: true })
  list()
  // The full CLI's cache (dist/main.cjs.v8cache) is written by the first command that finds none: here, one that runs
  // much of what most commands and the agent's start run (the configuration, kern.db, the session, the tools, the
  // tokenizer and the prompt). A command's code outside it is compiled when it runs, as before. An empty kern.db says
  // a new one is meant (the folder holds a session).
  // A command that fails here leaves the cache to the first command a user runs; the build is not the worse for it.
  await writeFile(NodePath.join(scratch, ".kern", "kern.db"), "")
  try {
    execFileSync(process.execPath, [kernBin, "context", "show", "--dir", scratch], {
      stdio: ["ignore", "ignore", "pipe"],
      timeout: 120_000
    })
  } catch (error) {
    console.warn(`kern build: the full CLI's code cache was not written (\`kern context show\` failed: ${String(error.stderr ?? error).trim()})`)
  }
} finally {
  await rm(scratch, { recursive: true, force: true })
}

// The web UI: one minified script and one stylesheet beside index.html, served by kern's own server (no CDN, no inline
// script or style, so the page runs under `Content-Security-Policy: default-src 'self'`).
await mkdir(new URL("web/assets/", dist), { recursive: true })
await build({
  // The agent's page (app) and `kern serve`'s host page (host), each with its script and stylesheet.
  entryPoints: { app: "src/channels/web/ui/main.tsx", host: "src/channels/web/ui/host/main.tsx" },
  outdir: fileURLToPath(new URL("web/assets/", dist)),
  absWorkingDir: fileURLToPath(root),
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
await copyFile(new URL("src/channels/web/ui/index.html", root), new URL("web/index.html", dist))
await copyFile(new URL("src/channels/web/ui/host.html", root), new URL("web/host.html", dist))
await copyFile(new URL("src/channels/web/ui/favicon.svg", root), new URL("web/assets/favicon.svg", dist))

if (withTypes && !separate) {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { stdio: "inherit", cwd: new URL("..", import.meta.url) })
}

await writeFile(stamp, inputs)
