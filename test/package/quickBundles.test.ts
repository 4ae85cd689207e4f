import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { testDist } from "../support/build.js"

// `kern chat` through a running agent runs from dist/quickChat.cjs (src/quick/chat.ts): a client of the agent's HTTP
// API, which must not bring the runtime in. The build writes each quick bundle's esbuild metafile beside it; these
// checks read the test build's: what the bundle holds, and what it requires from outside at run time.

interface Metafile {
  readonly outputs: Record<string, {
    readonly inputs: Record<string, unknown>
    readonly imports: ReadonlyArray<{ readonly path: string; readonly kind: string }>
  }>
}

const bundleOf = (name: string) => {
  const meta: Metafile = JSON.parse(NodeFs.readFileSync(NodePath.join(testDist, `${name}.meta.json`), "utf8"))
  const output = Object.entries(meta.outputs).find(([file]) => file.endsWith(`${name}.cjs`))
  if (output === undefined) throw new Error(`${name}.meta.json names no ${name}.cjs`)
  return { inputs: Object.keys(output[1].inputs), imports: output[1].imports.map((entry) => entry.path), kinds: output[1].imports }
}

/** What a client has no use for: tokenizers, provider SDKs, SQLite, the cluster, a second undici. */
const runtimeOnly: ReadonlyArray<readonly [string, RegExp]> = [
  ["a tokenizer", /gpt-tokenizer|tiktoken|[/]tokenizers?[/.]/i],
  ["a provider SDK", /@effect[/]ai-(openai|anthropic)|node_modules[/](openai|@anthropic-ai)[/]/],
  // kern's SQLite. (undici, the HTTP client, names node:sqlite for a cache store of its own that kern never makes.)
  ["SQLite", /better-sqlite3|sqlite-vec|@effect[/]sql-sqlite/],
  ["the cluster", /@effect[/]cluster|node:cluster|^cluster$/],
  ["the runtime", /src[/](agent|kernel[/]Executor|model[/]Provider[.]ts|context[/](plan|ContextWindow)|recall[/]Embedder|session[/]SessionStore|storage[/]Database)/],
  // node's own fetch is undici already: a copy in the bundle doubles what a chat compiles and holds.
  ["the undici package", /node_modules[/]undici[/]|^undici$/]
]

describe("the quick chat client's bundle loads no runtime module", () => {
  it("holds and requires no tokenizer, provider SDK, SQLite, cluster or undici package", () => {
    const { imports, inputs } = bundleOf("quickChat")
    expect(inputs).toContain("src/cli/chatRemote.ts")
    for (const [what, pattern] of runtimeOnly) {
      expect(inputs.filter((file) => pattern.test(file)), `quickChat.cjs holds ${what}`).toEqual([])
      expect(imports.filter((file) => pattern.test(file)), `quickChat.cjs requires ${what}`).toEqual([])
    }
  })

  it("talks HTTP with node's http module, not node's fetch (whose first call adds ~40 MiB to a chat's peak RSS)", () => {
    const { imports, inputs } = bundleOf("quickChat")
    expect(inputs.filter((file) => /fetchHttpClient/i.test(file))).toEqual([])
    expect(imports).toContain("node:http")
  })

  it("hold no package index evaluated whole (scripts/deepImports.mjs): no effect test services, no msgpackr", () => {
    for (const name of ["quickChat", "quickStatus"]) {
      const { inputs } = bundleOf(name)
      expect(inputs.filter((file) => /effect[/]dist[/]esm[/]Test|msgpackr|detect-libc/.test(file)), `${name}.cjs`).toEqual([])
    }
  })
})

describe("the status client that asks a running agent loads almost nothing", () => {
  it("holds only its own plain modules: no Effect, no schema, no SQLite, no command line; requires node's modules alone", () => {
    const { imports, inputs } = bundleOf("quickStatusAsk")
    expect(inputs.toSorted()).toEqual([
      "src/channels/terminalSafe.ts",
      "src/config/dotenv.ts",
      "src/config/paths.ts",
      "src/config/reportEnvironment.ts",
      "src/quick/chatProbe.ts",
      "src/quick/keptOutputs.ts",
      "src/quick/printOutput.ts",
      "src/quick/sha256.ts",
      "src/quick/statusArgs.ts",
      "src/quick/statusAsk.ts",
      "src/quick/statusCache.ts",
      "src/quick/statusSettle.ts",
      "src/storage/processState.ts"
    ])
    expect(imports.filter((path) => !path.startsWith("node:"))).toEqual([])
  })
})

describe("the sessions listing's kept answer loads almost nothing", () => {
  it("holds only its own plain modules: no Effect, no schema, no command line; requires node's modules alone", () => {
    const { imports, inputs } = bundleOf("quickSessionsAsk")
    expect(inputs.toSorted()).toEqual([
      "src/channels/terminalSafe.ts",
      "src/config/paths.ts",
      "src/config/reportEnvironment.ts",
      "src/kernel/Audience.ts",
      "src/quick/keptOutputs.ts",
      "src/quick/printOutput.ts",
      "src/quick/sessionsArgs.ts",
      "src/quick/sessionsAsk.ts",
      "src/quick/sessionsCache.ts",
      "src/quick/sha256.ts",
      "src/quick/statusSettle.ts",
      "src/session/conversationIds.ts"
    ])
    expect(imports.filter((path) => !path.startsWith("node:"))).toEqual([])
  })
})

describe("the one-shot chat's turn bundle (src/quick/chatLocal.ts) runs as bin/kern.js loads it", () => {
  it("imports nothing with import(), which fails in the vm.Script bin/kern.js runs it as: later parts are required", () => {
    const { inputs, kinds } = bundleOf("quickChatLocal")
    expect(inputs).toContain("src/cli/chat.ts")
    // sharp (images) is external and imported by a later part: it must be a require.
    expect(kinds.filter((entry) => entry.path === "sharp").map((entry) => entry.kind)).toContain("require-call")
    expect(kinds.filter((entry) => entry.kind === "dynamic-import")).toEqual([])
    expect(NodeFs.readFileSync(NodePath.join(testDist, "quickChatLocal.cjs"), "utf8")).not.toMatch(/\bimport\(/)
  })

  it("holds no @effect/ai index (scripts/deepImports.mjs), whose MCP schemas a chat never uses and evaluated at every chat", () => {
    const { inputs } = bundleOf("quickChatLocal")
    expect(inputs.filter((file) => /@effect[/]ai[/]dist[/]esm[/](index|McpSchema|McpServer)[.]js$/.test(file))).toEqual([])
    expect(inputs.filter((file) => /@effect[/]ai[/]dist[/]esm[/]LanguageModel[.]js$/.test(file))).toHaveLength(1)
  })
})

describe("the probe that picks a chat's bundle (src/quick/chatProbe.ts) loads almost nothing", () => {
  it("holds only its own plain modules: no Effect, no schema; requires node's modules alone", () => {
    const { imports, inputs } = bundleOf("quickChatProbe")
    expect(inputs.toSorted()).toEqual(["src/config/paths.ts", "src/quick/chatArgs.ts", "src/quick/chatProbe.ts"])
    expect(imports.filter((path) => !path.startsWith("node:"))).toEqual([])
  })
})
