import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect } from "effect"
import { bearer, request, startServer } from "../channels/web/harness.js"
import { initAgentFolder } from "../support/agentFolder.js"
import { runKernIn } from "../support/inProcessCli.js"
import { seedSpend, seedSpendIn, type SpendRowSeed, today } from "../support/spendRows.js"

// Today's spend against each `limits` cap, from the ledger in kern.db: in `kern status` (text and --json) and in
// GET /status (`spend`).

const limits = { perDay: { usdCents: 500, tokens: 2000000 }, perUser: { usdCents: 10 }, perChannel: { tokens: 3000 } }
const rows: ReadonlyArray<SpendRowSeed> = [
  ["agent", "", 9000, 1000, 12.5],
  ["purpose", "turn", 8000, 900, 11],
  ["purpose", "summary", 1000, 100, 1.5],
  ["user", "operator", 2000, 200, 1.25],
  ["user", "telegram:42", 6000, 700, 11.25],
  ["channel", "telegram:42", 6000, 700, 11.25],
  ["channel", "web:operator", 2000, 200, 1.25]
]

describe("kern status: today's spend against the caps", () => {
  it.live("text and --json: the agent against perDay, each user against perUser, each channel against perChannel, the caps reached", () =>
    Effect.gen(function*() {
      const dir = initAgentFolder(["--model", "m"], { limits, timezone: "UTC" })
      const day = today("UTC")
      yield* seedSpendIn(dir, day, rows)
      // An older day's spend is not today's.
      yield* seedSpendIn(dir, "2000-01-01", [["agent", "", 1, 1, 999]])

      const shown = yield* Effect.promise(() => runKernIn(["status", dir]))
      expect(shown.stdout).toContain(`spend:     today ${day}: 12.50¢ of 500¢, 10000 of 2000000 tokens (perDay), 1 model calls`)
      expect(shown.stdout).toContain("by purpose: turn 11.00¢ / 8900 tokens, summary 1.50¢ / 1100 tokens")
      expect(shown.stdout).toContain("users (perUser: 10¢ each): telegram:42 11.25¢ of 10¢, 6700 tokens; operator 1.25¢ of 10¢, 2200 tokens")
      expect(shown.stdout).toContain("channels (perChannel: 3000 tokens each): telegram:42 11.25¢, 6700 of 3000 tokens; web:operator 1.25¢, 2200 of 3000 tokens")
      expect(shown.stdout).toContain("REACHED: limits.perUser.usdCents 10.00¢ for telegram:42 (11.25¢ spent): its calls are refused today")
      expect(shown.stdout).toContain("REACHED: limits.perChannel.tokens 3000 tokens for telegram:42 (6700 tokens spent)")
      expect(shown.stdout).not.toContain("999")

      const json = JSON.parse((yield* Effect.promise(() => runKernIn(["status", dir, "--json"]))).stdout)
      expect(json.spend).toEqual({
        day,
        limits,
        agent: { calls: 1, inputTokens: 9000, outputTokens: 1000, usdCents: 12.5 },
        users: [
          { key: "telegram:42", calls: 1, inputTokens: 6000, outputTokens: 700, usdCents: 11.25 },
          { key: "operator", calls: 1, inputTokens: 2000, outputTokens: 200, usdCents: 1.25 }
        ],
        channels: [
          { key: "telegram:42", calls: 1, inputTokens: 6000, outputTokens: 700, usdCents: 11.25 },
          { key: "web:operator", calls: 1, inputTokens: 2000, outputTokens: 200, usdCents: 1.25 }
        ],
        purposes: [
          { key: "turn", calls: 1, inputTokens: 8000, outputTokens: 900, usdCents: 11 },
          { key: "summary", calls: 1, inputTokens: 1000, outputTokens: 100, usdCents: 1.5 }
        ],
        reached: [
          { cap: "perUser", measure: "usdCents", key: "telegram:42", limit: 10, spent: 11.25 },
          { cap: "perChannel", measure: "tokens", key: "telegram:42", limit: 3000, spent: 6700 }
        ]
      })
    }))

  it.scopedLive("GET /status carries the same spend from the running agent's ledger", () =>
    Effect.gen(function*() {
      const { base, context } = yield* startServer({ config: { limits, timezone: "UTC" } })
      const day = today("UTC")
      yield* seedSpend(Context.get(context, SqlClient.SqlClient), day, rows)
      const status = yield* request(`${base}/status`, { headers: bearer })
      expect(status.status).toBe(200)
      expect(status.json).toMatchObject({
        spend: {
          day,
          limits,
          agent: { calls: 1, inputTokens: 9000, outputTokens: 1000, usdCents: 12.5 },
          users: [{ key: "telegram:42", usdCents: 11.25 }, { key: "operator", usdCents: 1.25 }],
          channels: [{ key: "telegram:42" }, { key: "web:operator" }],
          reached: [
            { cap: "perUser", measure: "usdCents", key: "telegram:42", limit: 10, spent: 11.25 },
            { cap: "perChannel", measure: "tokens", key: "telegram:42", limit: 3000, spent: 6700 }
          ]
        }
      })
    }))
})
