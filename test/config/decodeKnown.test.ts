import { assert, describe, it } from "@effect/vitest"
import { Either, ParseResult, Schema } from "effect"
import { decodeKnown } from "../../src/config/decode.js"
import { KernConfigFile } from "../../src/config/schema.js"

/** What decoding the whole schema at once gives (what decodeConfigFile did before it decoded key by key). */
const whole = (raw: Record<string, unknown>) => Schema.decodeUnknownEither(KernConfigFile)(raw, { onExcessProperty: "ignore" })

const issues = (error: ParseResult.ParseError) => ParseResult.ArrayFormatter.formatErrorSync(error)

const configs: ReadonlyArray<Record<string, unknown>> = [
  {},
  // As `kern init` writes it.
  { name: "house", provider: "openrouter", model: "anthropic/claude-sonnet-4", contractEnforcement: "observe", autoCommit: false },
  {
    provider: "openai",
    baseURL: "https://api.example.com/v1",
    embeddingModel: false,
    budget: { maxToolCalls: 10 },
    corsOrigins: ["https://app.example"],
    prices: { "gpt-x": { input: 1, output: 2 } },
    bashEnv: ["GITHUB_TOKEN"],
    mcpServers: { files: { command: "npx", args: ["-y", "server"] }, web: { url: "https://mcp.example/sse" } },
    limits: {},
    subagents: {},
    jobs: {},
    media: {},
    retention: {},
    port: 8080,
    activeHours: "08:00-22:00"
  },
  { provider: "nope" },
  { budget: { maxToolCalls: 0 } },
  { budget: 3 },
  { port: 70000, provider: 1 },
  { provider: 1, port: 70000 },
  { bashEnv: ["OK", "not a name"] },
  { mcpServers: { "bad name": { command: "x" } } },
  { mcpServers: { files: { command: 3 } } },
  { corsOrigins: ["https://app.example/path"] },
  { limits: 100 },
  { media: 5 },
  { model: "" }
]

describe("config.json decoded key by key", () => {
  for (const raw of configs) {
    it(`gives what decoding the whole schema gives: ${JSON.stringify(raw).slice(0, 80)}`, () => {
      const byKey = decodeKnown(raw)
      const reference = whole(raw)
      assert.strictEqual(byKey._tag, reference._tag)
      if (Either.isRight(byKey) && Either.isRight(reference)) {
        assert.deepStrictEqual(byKey.right, reference.right)
        assert.deepStrictEqual(Object.keys(byKey.right), Object.keys(reference.right))
      }
      if (Either.isLeft(byKey) && Either.isLeft(reference)) {
        assert.deepStrictEqual(issues(byKey.left), issues(reference.left))
      }
    })
  }
})
