import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodePath from "node:path"
import { loadConfig } from "../../src/config/AgentConfig.js"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const secretsOf = (config: Record<string, unknown>, dotenv: string, inherited: Record<string, string>) =>
  Effect.gen(function*() {
    const dir = NodePath.join(makeTempDir(), "agent")
    writeFiles(dir, { ".kern/config.json": JSON.stringify(config), ".kern/.env": dotenv })
    const loaded = yield* loadConfig(dir).pipe(Effect.provideService(ProcessEnv, inherited), Effect.provide(NodeContext.layer))
    return KnownSecrets.fromConfig(loaded).secrets
  })

describe("KnownSecrets", () => {
  it.effect("the .env values, the configured provider key and kern's tokens, then the shell's variables named like secrets; short values and other variables left out", () =>
    Effect.gen(function*() {
      const secrets = yield* secretsOf(
        { provider: "anthropic" },
        "DB_PASSWORD=correct-horse-battery\nSHORT=abc1234\nDUPLICATE=correct-horse-battery\n",
        {
          ANTHROPIC_API_KEY: "sk-ant-inherited-key-0001",
          OPENAI_API_KEY: "sk-not-the-configured-provider",
          TELEGRAM_BOT_TOKEN: "123456:telegram-token",
          GITHUB_TOKEN: "ghp_shell-token-000000",
          NPM_TOKEN: "short",
          SAME_TOKEN: "correct-horse-battery",
          HOME: "/home/operator-with-a-long-path",
          PWD: "/home/operator-with-a-long-path/agents",
          OLDPWD: "/home/operator-with-a-long-path/old"
        }
      )
      assert.deepStrictEqual(secrets, [
        { name: "OPENAI_API_KEY", value: "sk-not-the-configured-provider", origin: "shell" },
        { name: "ANTHROPIC_API_KEY", value: "sk-ant-inherited-key-0001", origin: "agent" },
        { name: "GITHUB_TOKEN", value: "ghp_shell-token-000000", origin: "shell" },
        { name: "DB_PASSWORD", value: "correct-horse-battery", origin: "agent" },
        { name: "TELEGRAM_BOT_TOKEN", value: "123456:telegram-token", origin: "agent" }
      ])
    }))

  it.effect("apiKeyEnv names the provider key; a .env value overrides the inherited one", () =>
    Effect.gen(function*() {
      const secrets = yield* secretsOf(
        { provider: "openai-compatible", apiKeyEnv: "MY_LLM_KEY" },
        "MY_LLM_KEY=from-dotenv-0123456789\n",
        { MY_LLM_KEY: "inherited-0123456789" }
      )
      assert.deepStrictEqual(secrets, [{ name: "MY_LLM_KEY", value: "from-dotenv-0123456789", origin: "agent" }])
    }))

  it("a secret that contains another comes first, so it is replaced whole", () => {
    const { secrets } = KnownSecrets.make([["INNER", "abcdefgh"], ["OUTER", "xx-abcdefgh-yy"]])
    assert.deepStrictEqual(secrets.map((secret) => secret.name), ["OUTER", "INNER"])
  })
})
