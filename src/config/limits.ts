import { Schema } from "effect"

/**
 * `limits`: the agent's spend ceiling, per day in the agent's `timezone`. `perDay` caps the whole agent, `perUser` each
 * person (the operator included; a chat user by interface and id), `perChannel` each channel (`interface:channel`).
 * Each cap may bound US cents (`usdCents`, priced by `prices` and the built-in table) and tokens (`tokens`, prompt and
 * output together, every model call: turns, the heartbeat, summaries, embeddings). A model call is refused once a
 * cap it counts against is reached.
 */
export const SpendCap = Schema.Struct({
  usdCents: Schema.optional(Schema.Number.pipe(Schema.nonNegative()).annotations({ identifier: "a number ≥ 0 (US cents)" })),
  tokens: Schema.optional(Schema.Int.pipe(Schema.nonNegative()).annotations({ identifier: "an integer ≥ 0 (tokens)" }))
})
export type SpendCap = typeof SpendCap.Type

export const capNames = ["perDay", "perUser", "perChannel"] as const
export type CapName = typeof capNames[number]
export const measureNames = ["usdCents", "tokens"] as const
export type Measure = typeof measureNames[number]

export const Limits = Schema.Struct({
  perDay: Schema.optional(SpendCap),
  perUser: Schema.optional(SpendCap),
  perChannel: Schema.optional(SpendCap)
})
export type Limits = typeof Limits.Type

export const limitsExpectation =
  "an object { perDay?, perUser?, perChannel? }, each { usdCents?: a number ≥ 0 (US cents), tokens?: an integer ≥ 0 } " +
  "(per day in the agent's timezone: the whole agent, each user, each channel)"

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The keys under `limits` kern does not know, dotted (`perDya`, `perUser.cents`): a spending cap is a safety setting,
 * so a misspelt one stops kern instead of leaving the agent uncapped.
 */
export const unknownLimitKeys = (limits: unknown): ReadonlyArray<{ readonly key: string; readonly known: ReadonlySet<string> }> => {
  if (!isRecord(limits)) return []
  const caps: ReadonlySet<string> = new Set(capNames)
  const measures: ReadonlySet<string> = new Set(measureNames)
  return Object.entries(limits).flatMap(([cap, value]) =>
    !caps.has(cap)
      ? [{ key: cap, known: caps }]
      : isRecord(value)
      ? Object.keys(value).filter((measure) => !measures.has(measure)).map((measure) => ({
        key: `${cap}.${measure}`,
        known: new Set(measureNames.map((name) => `${cap}.${name}`))
      }))
      : []
  )
}
