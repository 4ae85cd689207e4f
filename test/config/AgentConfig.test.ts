import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { loadConfig, makeConfigLoader } from "../../src/config/AgentConfig.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { expectations, KernConfigFields } from "../../src/config/schema.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const load = (dir: string, env: Record<string, string> = {}) =>
  loadConfig(dir).pipe(Effect.provideService(ProcessEnv, env), Effect.provide(NodeContext.layer))

const agentWith = (config: unknown, extra: Record<string, string> = {}) => {
  const dir = NodePath.join(makeTempDir(), "atlas")
  writeFiles(dir, { ".kern/config.json": typeof config === "string" ? config : JSON.stringify(config), ...extra })
  return dir
}

describe("AgentConfig", () => {
  it.effect("an empty config file gives every default, with the folder name as name", () =>
    Effect.gen(function*() {
      const loaded = yield* load(agentWith({}))
      const { config } = loaded
      assert.strictEqual(config.name, "atlas")
      assert.strictEqual(config.provider, "openrouter")
      assert.strictEqual(config.model, undefined)
      assert.strictEqual(config.toolScope, "full")
      assert.strictEqual(config.approvalMode, "auto")
      assert.strictEqual(config.safetyMode, "NORMAL")
      assert.strictEqual(config.maxSteps, 30)
      assert.strictEqual(config.maxContextTokens, 100_000)
      assert.strictEqual(config.maxToolResultChars, 20_000)
      assert.strictEqual(config.summaryBudget, 0.75)
      assert.strictEqual(config.recall, true)
      assert.strictEqual(config.autoRecall, false)
      assert.strictEqual(config.heartbeatInterval, 60)
      assert.strictEqual(config.activeHours, undefined)
      assert.strictEqual(config.staleKnowledgeDays, 30)
      assert.strictEqual(config.host, "127.0.0.1")
      assert.strictEqual(config.port, undefined)
      assert.deepStrictEqual({ ...config.budget }, {
        maxToolCalls: 200,
        maxPromptTokens: 3_000_000,
        maxLatencyMs: 900_000,
        maxCostUsdCents: 500
      })
      assert.strictEqual(config.contractEnforcement, "observe")
      assert.strictEqual(config.workspaceGuard, true)
      assert.strictEqual(config.autoCommit, true)
      assert.deepStrictEqual(config.prices, {})
      assert.deepStrictEqual(config.bashEnv, [])
      assert.isTrue(loaded.fileExists)
      assert.deepStrictEqual(loaded.warnings, [])
    }))

  it.effect("summaryBudget 0 is valid: it turns summaries off", () =>
    Effect.gen(function*() {
      const { config } = yield* load(agentWith({ summaryBudget: 0 }))
      assert.strictEqual(config.summaryBudget, 0)
    }))

  it.effect("a partial budget keeps the defaults of the keys it leaves out", () =>
    Effect.gen(function*() {
      const { config } = yield* load(agentWith({ budget: { maxToolCalls: 5 } }))
      assert.strictEqual(config.budget.maxToolCalls, 5)
      assert.strictEqual(config.budget.maxPromptTokens, 3_000_000)
    }))

  it.effect("values in the file override defaults", () =>
    Effect.gen(function*() {
      const { config } = yield* load(agentWith({
        name: "Atlas",
        provider: "ollama",
        model: "llama3",
        embeddingModel: false,
        toolScope: "read",
        port: 8080
      }))
      assert.strictEqual(config.name, "Atlas")
      assert.strictEqual(config.provider, "ollama")
      assert.strictEqual(config.model, "llama3")
      assert.strictEqual(config.embeddingModel, false)
      assert.strictEqual(config.toolScope, "read")
      assert.strictEqual(config.port, 8080)
    }))

  const wrong: ReadonlyArray<readonly [string, unknown, string]> = [
    ["name", 42, "the number 42"],
    ["name", "", "the string \"\""],
    ["provider", "gpt", "the string \"gpt\""],
    ["model", ["a"], "an array [\"a\"]"],
    ["baseURL", false, "false"],
    ["apiKeyEnv", 1, "the number 1"],
    ["api", "graphql", "the string \"graphql\""],
    ["embeddingModel", true, "true"],
    ["summaryModel", null, "null"],
    ["heartbeatModel", 7, "the number 7"],
    ["toolScope", "admin", "the string \"admin\""],
    ["approvalMode", "yes", "the string \"yes\""],
    ["approvalTimeout", 0, "the number 0"],
    ["askTimeout", 3601, "the number 3601"],
    ["safetyMode", "safe", "the string \"safe\""],
    ["maxSteps", "thirty", "the string \"thirty\""],
    ["maxContextTokens", -5, "the number -5"],
    ["maxToolResultChars", 1.5, "the number 1.5"],
    ["summaryBudget", 2, "the number 2"],
    ["recall", "yes", "the string \"yes\""],
    ["autoRecall", 1, "the number 1"],
    ["autoRecallMaxDistance", 3, "the number 3"],
    ["autoRecallTokens", 0, "the number 0"],
    ["heartbeatInterval", -1, "the number -1"],
    ["activeHours", "8-22", "the string \"8-22\""],
    ["staleKnowledgeDays", 0, "the number 0"],
    ["timezone", 3, "the number 3"],
    ["host", "", "the string \"\""],
    ["port", 70000, "the number 70000"],
    ["corsOrigins", "https://app.example", "the string \"https://app.example\""],
    ["budget", 3, "the number 3"],
    ["budget.maxToolCalls", 0, "the number 0"],
    ["budget.maxPromptTokens", "many", "the string \"many\""],
    ["budget.maxLatencyMs", 1.5, "the number 1.5"],
    ["budget.maxCostUsdCents", -1, "the number -1"],
    ["contractEnforcement", "strict", "the string \"strict\""],
    ["workspaceGuard", "on", "the string \"on\""],
    ["autoCommit", 0, "the number 0"],
    ["prices", 3, "the number 3"],
    ["bashEnv", "GITHUB_TOKEN", "the string \"GITHUB_TOKEN\""],
    ["conversations", "private", "the string \"private\""],
    ["maxConcurrentTurns", 0, "the number 0"],
    ["mcpServers", 3, "the number 3"],
    ["skillsPaths", "~/skills", "the string \"~/skills\""],
    ["webSearch", "brave", "the string \"brave\""],
    ["mcpToolBudget", 1.5, "the number 1.5"],
    ["tools", "webfetch", "the string \"webfetch\""],
    ["subagents", 2, "the number 2"],
    ["jobs", 3, "the number 3"],
    ["media", 5, "the number 5"],
    ["otel", "http://127.0.0.1:4318", "the string \"http://127.0.0.1:4318\""],
    ["limits", 100, "the number 100"],
    ["retention", "forever", "the string \"forever\""],
    ["transcriptionModel", "", "the string \"\""],
    ["vision", 3, "the number 3"],
    ["database", "postgres://db/kern", "the string \"postgres://db/kern\""]
  ]

  it("the wrong-type table covers every key", () => {
    const covered = new Set(wrong.map(([key]) => key))
    for (const key of Object.keys(expectations)) assert.isTrue(covered.has(key), `no wrong-type case for ${key}`)
    for (const key of Object.keys(KernConfigFields)) assert.property(expectations, key)
  })

  for (const [key, value, found] of wrong) {
    it.effect(`a wrong ${key} names the file, the key, what was expected and what was found`, () =>
      Effect.gen(function*() {
        const [top, sub] = key.split(".") as [string, string | undefined]
        const dir = agentWith(sub === undefined ? { [top]: value } : { [top]: { [sub]: value } })
        const error = yield* Effect.flip(load(dir))
        assert.strictEqual(error._tag, "ConfigError")
        assert.strictEqual(error.key, key)
        assert.strictEqual(error.found, found)
        assert.strictEqual(error.expected, (expectations as Record<string, string>)[key])
        assert.include(error.message, NodePath.join(dir, ".kern", "config.json"))
        assert.include(error.message, `key "${key}"`)
        assert.include(error.message, `found ${found}`)
      }))
  }

  it.effect("bashEnv takes variable names; anything else in it is a ConfigError naming the entry", () =>
    Effect.gen(function*() {
      const { config } = yield* load(agentWith({ bashEnv: ["GITHUB_TOKEN", "NPM_CONFIG_CACHE"] }))
      assert.deepStrictEqual(config.bashEnv, ["GITHUB_TOKEN", "NPM_CONFIG_CACHE"])
      const error = yield* Effect.flip(load(agentWith({ bashEnv: ["OK", "not a name"] })))
      assert.strictEqual(error.key, "bashEnv.1")
      assert.strictEqual(error.found, "the string \"not a name\"")
      assert.strictEqual(error.expected, expectations.bashEnv)
    }))

  it.effect("corsOrigins takes origins only: a path, a wildcard or another scheme is a ConfigError naming the entry", () =>
    Effect.gen(function*() {
      const { config } = yield* load(agentWith({ corsOrigins: ["https://app.example", "http://localhost:3000"] }))
      assert.deepStrictEqual(config.corsOrigins, ["https://app.example", "http://localhost:3000"])
      assert.deepStrictEqual((yield* load(agentWith({}))).config.corsOrigins, [])
      for (const bad of ["https://app.example/", "https://app.example/path", "*", "file:///tmp", "app.example"]) {
        const error = yield* Effect.flip(load(agentWith({ corsOrigins: ["https://ok.example", bad] })))
        assert.strictEqual(error.key, "corsOrigins.1", bad)
        assert.strictEqual(error.expected, expectations.corsOrigins)
      }
    }))

  it.effect("invalid JSON is a ConfigError naming the file", () =>
    Effect.gen(function*() {
      const dir = agentWith("{ \"model\": ")
      const error = yield* Effect.flip(load(dir))
      assert.strictEqual(error._tag, "ConfigError")
      assert.include(error.message, ".kern/config.json")
      assert.include(error.message, "expected valid JSON")
    }))

  it.effect("a JSON array is refused as a whole", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(load(agentWith([1, 2])))
      assert.strictEqual(error.expected, "a JSON object of settings")
    }))

  it.effect("unknown keys give one warning each and are ignored", () =>
    Effect.gen(function*() {
      const loaded = yield* load(agentWith({ model: "m", colour: "blue", tempo: 3, budget: { maxTokens: 1 } }))
      assert.strictEqual(loaded.config.model, "m")
      assert.strictEqual(loaded.warnings.length, 3)
      assert.match(loaded.warnings[0] ?? "", /config\.json: unknown key "colour" ignored/)
      assert.match(loaded.warnings[1] ?? "", /unknown key "tempo" ignored/)
      assert.match(loaded.warnings[2] ?? "", /unknown key "budget\.maxTokens" ignored/)
      assert.notProperty(loaded.config, "colour")
    }))

  it.effect("KERN_* overrides apply on top of config.json", () =>
    Effect.gen(function*() {
      const dir = agentWith({ name: "atlas", model: "a", provider: "openai", port: 1000 })
      const { config } = yield* load(dir, {
        KERN_NAME: "Hermes",
        KERN_MODEL: "b",
        KERN_PROVIDER: "ollama",
        KERN_PORT: "9090"
      })
      assert.strictEqual(config.name, "Hermes")
      assert.strictEqual(config.model, "b")
      assert.strictEqual(config.provider, "ollama")
      assert.strictEqual(config.port, 9090)
    }))

  it.effect("KERN_* overrides apply without config.json, and do not leak into the next load", () =>
    Effect.gen(function*() {
      const dir = NodePath.join(makeTempDir(), "bare")
      const first = yield* load(dir, { KERN_MODEL: "x", KERN_PORT: "7000" })
      assert.isFalse(first.fileExists)
      assert.strictEqual(first.config.name, "bare")
      assert.strictEqual(first.config.model, "x")
      assert.strictEqual(first.config.port, 7000)
      const second = yield* load(dir)
      assert.strictEqual(second.config.model, undefined)
      assert.strictEqual(second.config.port, undefined)
    }))

  it.effect("a bad KERN_PORT or KERN_PROVIDER is a ConfigError naming the variable", () =>
    Effect.gen(function*() {
      const dir = agentWith({})
      const port = yield* Effect.flip(load(dir, { KERN_PORT: "eighty" }))
      assert.strictEqual(port.key, "KERN_PORT")
      assert.include(port.message, "environment")
      const provider = yield* Effect.flip(load(dir, { KERN_PROVIDER: "skynet" }))
      assert.strictEqual(provider.key, "KERN_PROVIDER")
      assert.include(provider.message, "\"openrouter\"")
    }))

  it.effect(".kern/.env overrides the inherited environment, and feeds the overrides", () =>
    Effect.gen(function*() {
      const dir = agentWith({ model: "from-file" }, {
        ".kern/.env": [
          "# secrets",
          "OPENROUTER_API_KEY=sk-from-dotenv",
          "export QUOTED=\"two words\\nnext\"",
          "SINGLE='a # b'",
          "KERN_MODEL=from-dotenv # comment",
          "this line is broken"
        ].join("\n")
      })
      const loaded = yield* load(dir, { OPENROUTER_API_KEY: "sk-inherited", HOME: "/home/x" })
      assert.strictEqual(loaded.env["OPENROUTER_API_KEY"], "sk-from-dotenv")
      assert.strictEqual(loaded.env["HOME"], "/home/x")
      assert.strictEqual(loaded.env["QUOTED"], "two words\nnext")
      assert.strictEqual(loaded.env["SINGLE"], "a # b")
      assert.strictEqual(loaded.config.model, "from-dotenv")
      assert.deepStrictEqual([...loaded.secretKeys].sort(), ["KERN_MODEL", "OPENROUTER_API_KEY", "QUOTED", "SINGLE"])
      assert.strictEqual(loaded.warnings.length, 1)
      assert.match(loaded.warnings[0] ?? "", /\.env: line 6 is not KEY=VALUE/)
    }))

  it.effect("a loader that keeps its last decode loads as loadConfig does: each file read again, the text decoded again when it changed", () =>
    Effect.gen(function*() {
      const loader = yield* makeConfigLoader
      const loadBy = (dir: string, env: Record<string, string> = {}, cwd?: string) =>
        loader(dir, cwd).pipe(Effect.provideService(ProcessEnv, env), Effect.provide(NodeContext.layer))
      const dir = agentWith({ model: "first", colour: "blue" })
      const configFile = NodePath.join(dir, ".kern", "config.json")
      const sameAsLoad = (env: Record<string, string> = {}) =>
        Effect.gen(function*() {
          const kept = yield* loadBy(dir, env)
          assert.deepStrictEqual(kept, yield* load(dir, env))
          return kept
        })
      assert.strictEqual((yield* sameAsLoad()).config.model, "first")
      assert.strictEqual((yield* sameAsLoad({ KERN_MODEL: "from-env" })).config.model, "from-env")
      NodeFs.writeFileSync(configFile, JSON.stringify({ model: "second" }))
      const edited = yield* sameAsLoad()
      assert.strictEqual(edited.config.model, "second")
      assert.deepStrictEqual(edited.warnings, [])
      NodeFs.writeFileSync(NodePath.join(dir, ".kern", ".env"), "KERN_NAME=from-dotenv\n")
      assert.strictEqual((yield* sameAsLoad()).config.name, "from-dotenv")
      NodeFs.writeFileSync(configFile, "{ not json")
      assert.match((yield* Effect.flip(loadBy(dir))).message, /config\.json/)
      // The same text in another folder: named for that folder, and the file named as the folder was.
      NodeFs.writeFileSync(configFile, "{}")
      NodeFs.rmSync(NodePath.join(dir, ".kern", ".env"))
      assert.strictEqual((yield* loadBy(dir)).config.name, "atlas")
      const other = NodePath.join(makeTempDir(), "other")
      writeFiles(other, { ".kern/config.json": "{}" })
      assert.strictEqual((yield* loadBy(other)).config.name, "other")
      // The same text named the same way ("." from each folder): each still named for its folder.
      assert.strictEqual((yield* loadBy(".", {}, dir)).config.name, "atlas")
      assert.strictEqual((yield* loadBy(".", {}, other)).config.name, "other")
      writeFiles(other, { ".kern/config.json": "{\"colour\": 1}" })
      writeFiles(dir, { ".kern/config.json": "{\"colour\": 1}" })
      assert.match((yield* loadBy(dir)).warnings[0] ?? "", new RegExp(`^${dir}/\\.kern/config\\.json`))
      const relative = NodePath.relative(process.cwd(), other)
      assert.match((yield* loadBy(relative, {}, process.cwd())).warnings[0] ?? "", new RegExp(`^${relative}/\\.kern/config\\.json`))
      NodeFs.rmSync(NodePath.join(other, ".kern", "config.json"))
      assert.isFalse((yield* loadBy(other)).fileExists)
    }))
})
