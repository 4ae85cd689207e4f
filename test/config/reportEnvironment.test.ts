import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { request, startServer, token } from "../channels/web/harness.js"
import { apiKeyEnvFor, baseURLEnvFor } from "../../src/config/providers.js"
import { reportEnvironment, reportVariables } from "../../src/config/reportEnvironment.js"
import { Provider } from "../../src/config/schema.js"
import { chatChannelTokens } from "../../src/tools/Channels.js"
import { runKernIn } from "../support/inProcessCli.js"

// `kern status` of a running agent sends the agent the variables the report reads (src/config/reportEnvironment.ts),
// not its whole environment: an unrelated secret stays in the client's process, and the report made with what is sent
// is the one the command line makes with everything.

const secrets = { AWS_SECRET_ACCESS_KEY: "aws-secret", GITHUB_TOKEN_UNUSED: "ghp-unused", DATABASE_PASSWORD: "pw" }

describe("reportEnvironment", () => {
  it("keeps KERN_*, the provider keys and channel tokens, the variables config.json names; drops the rest", () => {
    const config = JSON.stringify({
      apiKeyEnv: "MY-KEY.v2",
      mcpServers: { gh: { command: "gh-mcp", env: { TOKEN: "Bearer ${GH_TOKEN}" } } },
      database: { url: "postgres://kern:${PGPASSWORD}@db/kern" }
    })
    const env = {
      ...secrets,
      KERN_NAME: "n",
      KERN_AUTH_TOKEN: "t",
      OPENROUTER_API_KEY: "k",
      TELEGRAM_BOT_TOKEN: "1:a",
      "MY-KEY.v2": "mine",
      GH_TOKEN: "gh",
      PGPASSWORD: "pg",
      PATH: "/bin",
      HOME: "/root",
      UNSET: undefined
    }
    expect(reportEnvironment(env, config)).toEqual({
      KERN_NAME: "n",
      KERN_AUTH_TOKEN: "t",
      OPENROUTER_API_KEY: "k",
      TELEGRAM_BOT_TOKEN: "1:a",
      "MY-KEY.v2": "mine",
      GH_TOKEN: "gh",
      PGPASSWORD: "pg"
    })
    // config.json that is no JSON: its words still name variables; no config file names none.
    expect(reportEnvironment(env, "{ \"apiKeyEnv\": GH_TOKEN")).toHaveProperty("GH_TOKEN", "gh")
    expect(Object.keys(reportEnvironment(env, undefined)).sort()).toEqual(["KERN_AUTH_TOKEN", "KERN_NAME", "OPENROUTER_API_KEY", "TELEGRAM_BOT_TOKEN"])
  })

  it("names every variable the config code reads by default (providers' keys and base URLs, channel tokens)", () => {
    const read = [
      ...Provider.literals.flatMap((provider) => [apiKeyEnvFor({ provider }), baseURLEnvFor(provider)]),
      ...Object.values(chatChannelTokens).flat()
    ].filter((name): name is string => name !== undefined)
    for (const name of read) expect(reportVariables, name).toContain(name)
  })

  it.live("the agent's report from the variables sent is the command line's from the whole environment", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, dir } = yield* startServer({ config: { prices: { m: { input: 0, output: 0 } } }, recordAddress: true })
      const configFile = NodePath.join(dir, ".kern", "config.json")
      const cases: ReadonlyArray<{ readonly config?: Record<string, unknown>; readonly env: Record<string, string> }> = [
        { env: { OPENROUTER_API_KEY: "sk-test", KERN_AUTH_TOKEN: token } },
        { env: { KERN_AUTH_TOKEN: token, SLACK_BOT_TOKEN: "xoxb", SLACK_APP_TOKEN: "xapp", KERN_MODEL: "other" } },
        { config: { apiKeyEnv: "MY_OWN_KEY" }, env: { MY_OWN_KEY: "k", KERN_AUTH_TOKEN: token } },
        { config: { apiKeyEnv: "MY_OWN_KEY" }, env: { OPENROUTER_API_KEY: "k", KERN_AUTH_TOKEN: token } },
        { config: { provider: "ollama" }, env: { OLLAMA_BASE_URL: "not a url", KERN_AUTH_TOKEN: token } },
        { config: { provider: "openai-compatible", baseURL: undefined }, env: { OPENAI_API_KEY: "k", KERN_AUTH_TOKEN: token } }
      ]
      const original = JSON.parse(NodeFs.readFileSync(configFile, "utf8"))
      for (const { config, env } of cases) {
        const configText = JSON.stringify({ ...original, ...config })
        NodeFs.writeFileSync(configFile, configText)
        for (const json of [false, true]) {
          const whole = { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", ...secrets, ...env }
          const local = yield* Effect.promise(() => runKernIn(["status", dir, ...(json ? ["--json"] : [])], { env: { ...secrets, ...env } }))
          const answer = yield* request(`${base}/status/report`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify({ dir, cwd: process.cwd(), env: reportEnvironment(whole, configText), json })
          })
          expect(answer.status, answer.text).toBe(200)
          const output = answer.json as { readonly stdout: string; readonly failure: string | null }
          const timeless = (text: string) => text.replace(/, up \d+ s/g, ", up N s").replace(/"uptimeMs":\d+/g, "\"uptimeMs\":N")
          expect(timeless(`${output.stdout}\n`), JSON.stringify({ config, env, json })).toBe(timeless(local.stdout))
          expect(output.failure === null ? "" : `kern: ${output.failure}\n`).toBe(local.stderr)
        }
      }
    })))
})
