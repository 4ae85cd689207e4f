import { Prompt } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  breakpointStride,
  cacheBreakpoints,
  maxBreakpoints,
  promptCachingApplies,
  withCacheBreakpoints
} from "../../src/context/caching.js"

type Role = Prompt.Message["role"]

const messageOf = (role: Role, i: number): Prompt.Message => {
  switch (role) {
    case "system":
      return Prompt.makeMessage("system", { content: `system ${i}` })
    case "user":
      return Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text: `question ${i}` })] })
    case "assistant":
      return Prompt.makeMessage("assistant", { content: [Prompt.makePart("text", { text: `answer ${i}` })] })
    case "tool":
      return Prompt.makeMessage("tool", {
        content: [Prompt.makePart("tool-result", { id: `c${i}`, name: "read", isFailure: false, result: `r${i}`, providerExecuted: false })]
      })
  }
}

/** A prompt as kern sends one: the system message, then the conversation. */
const promptOf = (roles: ReadonlyArray<Role>): Array<Prompt.Message> =>
  [messageOf("system", 0), ...roles.map((role, i) => messageOf(role, i + 1))]

/** Conversations: turns of a user message followed by assistant and tool messages (tool-heavy turns included). */
const conversation = fc.array(
  fc.tuple(fc.constant<Role>("user"), fc.array(fc.constantFrom<Role>("assistant", "tool"), { maxLength: 30 })),
  { minLength: 0, maxLength: 12 }
).map((turns) => turns.flatMap(([user, rest]) => [user, ...rest]))

const lastUser = (messages: ReadonlyArray<Prompt.Message>) => messages.findLastIndex((m) => m.role === "user")

/** The mid-history mark: the one that is neither the system message nor the last user message. */
const midOf = (messages: ReadonlyArray<Prompt.Message>): number | undefined =>
  cacheBreakpoints(messages).find((i) => i !== 0 && i !== lastUser(messages))

describe("cacheBreakpoints", () => {
  it("marks the system message, a mid-history user message at a multiple of 20 and the last user message", () => {
    // Users at 1, 3, 5, …, 49: message 40 is an assistant message, so the mid mark walks back to the user at 39.
    const messages = promptOf(Array.from({ length: 49 }, (_, i): Role => (i % 2 === 0 ? "user" : "assistant")))
    expect(messages).toHaveLength(50)
    expect(cacheBreakpoints(messages)).toEqual([0, 39, 49])
    expect(cacheBreakpoints(messages.slice(0, 30))).toEqual([0, 19, 29])
    // Users at 2, 4, …: message 40 is one, and is marked itself.
    const even = promptOf(Array.from({ length: 48 }, (_, i): Role => (i % 2 === 1 ? "user" : "assistant")))
    expect(cacheBreakpoints(even)).toEqual([0, 40, 48])
  })

  it("on short prompts marks only what exists", () => {
    expect(cacheBreakpoints([])).toEqual([])
    expect(cacheBreakpoints(promptOf([]))).toEqual([0])
    expect(cacheBreakpoints(promptOf(["user"]))).toEqual([0, 1])
    expect(cacheBreakpoints(promptOf(["user", "assistant", "tool", "assistant"]))).toEqual([0, 1])
    expect(cacheBreakpoints([messageOf("user", 0)])).toEqual([0])
    expect(cacheBreakpoints([messageOf("assistant", 0)])).toEqual([])
  })

  it("are at most 4, ascending, distinct, in range, on the system message or user messages (property)", () =>
    fc.assert(
      fc.property(conversation, (roles) => {
        const messages = promptOf(roles)
        const marks = cacheBreakpoints(messages)
        expect(marks.length).toBeLessThanOrEqual(maxBreakpoints)
        expect([...marks].sort((a, b) => a - b)).toEqual(marks)
        expect(new Set(marks).size).toBe(marks.length)
        for (const i of marks) {
          expect(i).toBeGreaterThanOrEqual(0)
          expect(i).toBeLessThan(messages.length)
          expect(i === 0 ? "system" : messages[i]!.role).toBe(i === 0 ? "system" : "user")
        }
        expect(marks[0]).toBe(0)
        const last = lastUser(messages)
        if (last > 0) expect(marks.at(-1)).toBe(last)
        const mid = midOf(messages)
        // The mid mark is the last user message at or before the highest multiple of 20 below the count.
        if (mid !== undefined) {
          const snapped = Math.floor((messages.length - 1) / breakpointStride) * breakpointStride
          expect(mid).toBeLessThanOrEqual(snapped)
          expect(messages.slice(mid + 1, snapped + 1).some((m) => m.role === "user")).toBe(false)
        }
      }),
      { numRuns: 300 }
    ))

  it("keeps the mid mark on the same message while the history grows within 20 messages (property)", () =>
    fc.assert(
      fc.property(conversation, fc.nat(), fc.integer({ min: 1, max: breakpointStride - 1 }), (roles, at, growth) => {
        const all = promptOf(roles)
        const n = 1 + (at % all.length)
        const m = Math.min(all.length, n + growth)
        const before = midOf(all.slice(0, n))
        const after = midOf(all.slice(0, m))
        const sameBlock = Math.floor((n - 1) / breakpointStride) === Math.floor((m - 1) / breakpointStride)
        // Within one block of 20 a mark, once placed, never moves (it may appear when a later user message arrives).
        if (sameBlock && before !== undefined) expect(after).toBe(before)
        // Across a block boundary it moves forward only.
        if (before !== undefined && after !== undefined) expect(after).toBeGreaterThanOrEqual(before)
      }),
      { numRuns: 500 }
    ))

  it("moves the mid mark at most once for every 20 messages the history grows, and only forward", () => {
    const roles = Array.from({ length: 200 }, (_, i): Role => (i % 3 === 0 ? "user" : i % 3 === 1 ? "assistant" : "tool"))
    const all = promptOf(roles)
    const byBlock = new Map<number, Set<number>>()
    for (let n = 1; n <= all.length; n++) {
      const mid = midOf(all.slice(0, n))
      const block = Math.floor((n - 1) / breakpointStride)
      if (mid !== undefined) byBlock.set(block, (byBlock.get(block) ?? new Set()).add(mid))
    }
    const perBlock = [...byBlock.entries()].sort(([a], [b]) => a - b).map(([, mids]) => [...mids])
    expect(perBlock.length).toBeGreaterThan(5)
    for (const mids of perBlock) expect(mids).toHaveLength(1)
    const sequence = perBlock.map(([mid]) => mid!)
    expect([...sequence].sort((a, b) => a - b)).toEqual(sequence)
    expect(new Set(sequence).size).toBe(sequence.length)
  })
})

describe("withCacheBreakpoints", () => {
  it("copies exactly the marked messages, with an ephemeral cacheControl in their anthropic options", () => {
    const messages = promptOf(Array.from({ length: 44 }, (_, i): Role => (i % 2 === 0 ? "user" : "assistant")))
    const original = messages.map((m) => ({ ...m }))
    const marks = cacheBreakpoints(messages)
    const out = withCacheBreakpoints(messages)
    expect(out).toHaveLength(messages.length)
    out.forEach((message, i) => {
      if (marks.includes(i)) {
        expect(message).not.toBe(messages[i])
        expect(message.options).toMatchObject({ anthropic: { cacheControl: { type: "ephemeral" } } })
        expect({ ...message, options: undefined }).toEqual({ ...messages[i], options: undefined })
        expect(Prompt.isMessage(message)).toBe(true)
      } else {
        expect(message).toBe(messages[i])
      }
    })
    // The input is left as it was.
    expect(messages.map((m) => ({ ...m }))).toEqual(original)
    expect(messages.some((m) => "anthropic" in m.options)).toBe(false)
  })

  it("keeps options the message already had", () => {
    const system = Prompt.makeMessage("system", { content: "s", options: { openai: { x: 1 }, openrouter: { y: 2 } } })
    const [marked] = withCacheBreakpoints([system])
    expect(marked!.options).toEqual({ openai: { x: 1 }, openrouter: { y: 2 }, anthropic: { cacheControl: { type: "ephemeral" } } })
    expect(system.options).toEqual({ openai: { x: 1 }, openrouter: { y: 2 } })
  })
})

describe("promptCachingApplies", () => {
  it("applies to the anthropic provider and to anthropic/… models behind any provider", () => {
    expect(promptCachingApplies("anthropic", "claude-sonnet-4")).toBe(true)
    expect(promptCachingApplies("openrouter", "anthropic/claude-sonnet-4.5")).toBe(true)
    expect(promptCachingApplies("openai-compatible", "Anthropic/claude-3-7-sonnet")).toBe(true)
    expect(promptCachingApplies("openrouter", "openai/gpt-4.1")).toBe(false)
    expect(promptCachingApplies("openai", "gpt-4.1")).toBe(false)
    expect(promptCachingApplies("ollama", "claude-lookalike")).toBe(false)
  })
})
