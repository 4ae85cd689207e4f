import { describe, expect, it } from "@effect/vitest"
import { Duration, Option } from "effect"
import {
  admission,
  afterFailure,
  afterSuccess,
  backoffDelay,
  errorChars,
  healthOf,
  healthyFor,
  shortError,
  summarizerOf,
  withoutWait
} from "../../src/context/summarizerHealth.js"

const seconds = (n: number) => n * 1_000

const summarizer = summarizerOf({ provider: "openai", baseURL: undefined, summaryModel: "small", model: "big" })
const healthy = healthyFor(summarizer)

describe("the summarizer's backoff", () => {
  it("waits 30 s after a failure, doubling with each one after, never more than 30 minutes", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 100].map((n) => Duration.toSeconds(backoffDelay(n)))).toEqual([
      30,
      60,
      120,
      240,
      480,
      960,
      1800,
      1800,
      1800
    ])
  })

  it("closed during the wait, one probe after it, open again after a success", () => {
    expect(admission(healthy, 0)).toBe("open")
    const failed = afterFailure(healthy, seconds(10), "HTTP 503")
    expect(failed).toMatchObject({ consecutiveFailures: 1, lastError: "HTTP 503", nextAttemptAtMs: seconds(40) })
    expect(admission(failed, seconds(39))).toBe("closed")
    expect(admission(failed, seconds(40))).toBe("probe")
    const again = afterFailure(failed, seconds(40), "HTTP 503")
    expect(again).toMatchObject({ consecutiveFailures: 2, nextAttemptAtMs: seconds(100) })
    const back = afterSuccess(again, seconds(100))
    expect(back).toMatchObject({ consecutiveFailures: 0, nextAttemptAtMs: null, lastSuccessAtMs: seconds(100), lastError: "HTTP 503" })
    expect(admission(back, seconds(100))).toBe("open")
  })

  it("`kern segments rebuild` waives the wait: the next summary is a probe at once", () => {
    const failed = afterFailure(healthy, seconds(10), "HTTP 503")
    expect(admission(withoutWait(failed, seconds(11)), seconds(11))).toBe("probe")
    expect(withoutWait(healthy, seconds(11))).toBe(healthy)
  })

  it("a record of another summary model (the config changed) starts afresh, keeping the last success", () => {
    const failing = afterFailure(afterSuccess(healthy, seconds(5)), seconds(10), "HTTP 404: no such model")
    expect(healthOf(Option.some(failing), summarizer)).toBe(failing)
    const other = summarizerOf({ provider: "openai", baseURL: undefined, summaryModel: "fixed", model: "big" })
    expect(healthOf(Option.some(failing), other)).toMatchObject({
      summarizer: other,
      consecutiveFailures: 0,
      nextAttemptAtMs: null,
      lastSuccessAtMs: seconds(5)
    })
    expect(healthOf(Option.none(), other)).toMatchObject({ consecutiveFailures: 0, lastSuccessAtMs: null })
  })

  it("calls failing together (a pass writes a few at once) count once and do not lengthen the wait", () => {
    const first = afterFailure(healthy, seconds(10), "a")
    const second = afterFailure(first, seconds(11), "b")
    const third = afterFailure(second, seconds(12), "c")
    expect(third).toMatchObject({ consecutiveFailures: 1, nextAttemptAtMs: seconds(40), lastError: "c" })
  })
})

describe("the last error as the status shows it", () => {
  const secrets = [
    { name: "LONG_TOKEN", value: "tok-0123456789abcdef-0123456789", origin: "agent" as const },
    { name: "OPENAI_API_KEY", value: "sk-proj-abcdefghijklmnop", origin: "agent" as const },
    { name: "SHORT_TOKEN", value: "tok-0123456789abcdef", origin: "agent" as const }
  ]
  const corpus: ReadonlyArray<string> = [
    "Incorrect API key provided: sk-proj-abcdefghijklmnop",
    "sk-proj-abcdefghijklmnop",
    "401 {\"error\":{\"message\":\"bad key sk-proj-abcdefghijklmnop\",\"key\":\"sk-proj-abcdefghijklmnop\"}}",
    "proxy said: token=tok-0123456789abcdef-0123456789; retry later",
    "a secret that contains another: tok-0123456789abcdef and tok-0123456789abcdef-0123456789",
    `${"x".repeat(230)} sk-proj-abcdefghijklmnop at the cut`,
    `${"line\n".repeat(60)}sk-proj-abcdefghijklmnop`,
    "<html><body><h1>502 Bad Gateway</h1><p>Authorization: Bearer sk-proj-abcdefghijklmnop</p></body></html>",
    `\tsk-proj-abcdefghijklmnop\r\n${"padding ".repeat(100)}`
  ]

  it("never carries a known secret, in whole or cut, and stays one short line", () => {
    for (const message of corpus) {
      const shown = shortError(message, secrets)
      for (const secret of secrets) {
        expect(shown, message).not.toContain(secret.value)
        // A cut must not leave a secret's head behind either.
        expect(shown, message).not.toContain(secret.value.slice(0, 12))
      }
      expect(shown.length, message).toBeLessThanOrEqual(errorChars)
      expect(shown, message).not.toMatch(/[\n\r\t]/)
    }
    expect(shortError(corpus[0]!, secrets)).toBe("Incorrect API key provided: [redacted:OPENAI_API_KEY]")
  })
})
