import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodePath from "node:path"
import { loadConfig } from "../../src/config/AgentConfig.js"
import { fromConfig } from "../../src/config/KnownSecrets.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const load = (mcpServers: unknown, env = "") => {
  const dir = NodePath.join(makeTempDir(), "atlas")
  writeFiles(dir, { ".kern/config.json": JSON.stringify({ mcpServers }), ".kern/.env": env })
  return loadConfig(dir).pipe(Effect.provideService(ProcessEnv, {}), Effect.provide(NodeContext.layer))
}

describe("config mcpServers", () => {
  it.effect("stdio and HTTP servers decode with their defaults", () =>
    Effect.gen(function*() {
      const { config } = yield* load({
        github: { command: "npx", args: ["-y", "server-github"], env: { GITHUB_TOKEN: "${GITHUB_TOKEN}" } },
        remote: { url: "https://mcp.example/mcp", headers: { Authorization: "Bearer ${REMOTE_TOKEN}" }, tools: ["search"] }
      })
      const github = config.mcpServers["github"]
      assert.deepInclude(github, { command: "npx", enabled: true, start: "agent", timeoutMs: 30_000 })
      assert.deepInclude(config.mcpServers["remote"], { url: "https://mcp.example/mcp", tools: ["search"] })
    }))

  // Each bad server: the key the error names and a word of what it says is expected.
  const bad: ReadonlyArray<readonly [string, unknown, string, string]> = [
    ["no command or url", { gh: { args: ["x"] } }, "mcpServers.gh", "{ command"],
    ["an empty command", { gh: { command: "" } }, "mcpServers.gh.command", "the program"],
    ["args not an array", { gh: { command: "x", args: "a b" } }, "mcpServers.gh.args", "an array of strings"],
    ["an env value not a string", { gh: { command: "x", env: { A: 1 } } }, "mcpServers.gh.env", "${NAME}"],
    ["a url that is not http", { gh: { url: "ftp://example.com" } }, "mcpServers.gh", "URL"],
    ["a zero timeout", { gh: { command: "x", timeoutMs: 0 } }, "mcpServers.gh.timeoutMs", "milliseconds"],
    ["an unknown start", { gh: { command: "x", start: "later" } }, "mcpServers.gh.start", "first-use"],
    ["an override's safety class", { gh: { command: "x", overrides: { t: { safetyClass: "SAFE" } } } }, "mcpServers.gh.overrides", "safetyClass"],
    ["a server name with capitals", { GitHub: { command: "x" } }, "mcpServers", "\"GitHub\""],
    ["a server name with a dot", { "git.hub": { command: "x" } }, "mcpServers", "\"git.hub\""]
  ]
  for (const [what, servers, key, expected] of bad) {
    it.effect(`${what}: a ConfigError naming the server`, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(load(servers))
        assert.strictEqual(error._tag, "ConfigError")
        assert.strictEqual(error.key?.startsWith(key), true, `${error.key} for ${what}`)
        assert.include(error.expected, expected, what)
        assert.include(error.message, key, what)
      }))
  }

  it.effect("variables named in env and headers are secrets the guard knows", () =>
    Effect.gen(function*() {
      const loaded = yield* load(
        {
          gh: { command: "x", env: { GITHUB_TOKEN: "${GH_PAT}" } },
          remote: { url: "http://127.0.0.1:1/mcp", headers: { Authorization: "Bearer ${REMOTE_KEY_VALUE}" } }
        },
        "GH_PAT=ghp_0123456789abcdefghij\n"
      )
      const env = { ...loaded, env: { ...loaded.env, REMOTE_KEY_VALUE: "inherited-remote-secret-value" } }
      const names = fromConfig(env).secrets.map((secret) => secret.name)
      assert.include(names, "GH_PAT")
      assert.include(names, "REMOTE_KEY_VALUE")
    }))
})
