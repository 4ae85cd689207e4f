import { Prompt, Tool, Toolkit } from "@effect/ai"
import { Effect, Schema } from "effect"
import { FakeReply } from "../support/fakeModelServer.js"

// Two tools for model tests: one string-valued, one with numeric parameters.

export const ReadFile = Tool.make("read_file", {
  description: "Read a text file from the agent folder",
  parameters: { path: Schema.String },
  success: Schema.String
})

export const Add = Tool.make("add", {
  description: "Add two numbers",
  parameters: { a: Schema.Number, b: Schema.Number },
  success: Schema.Number
})

export const TestToolkit = Toolkit.make(ReadFile, Add)

export const TestToolkitLive = TestToolkit.toLayer({
  read_file: ({ path }) => Effect.succeed(`contents of ${path}`),
  add: ({ a, b }) => Effect.succeed(a + b)
})

export const twoCalls = [
  { id: "call_read", name: "read_file", args: { path: "notes/today.md" } },
  { id: "call_add", name: "add", args: { a: 2, b: 40 } }
] as const

/** The question both APIs' two-tool-call tests ask. */
export const twoCallPrompt = Prompt.make([
  { role: "system", content: "You are kern." },
  { role: "user", content: "What is in today's note, and what is 2 + 40?" }
])

/** The model's answer to it: some text and both tool calls, with cached input tokens. */
export const turnWithTwoCalls = FakeReply.toolCalls(twoCalls, {
  text: "Let me check.",
  usage: { input: 100, output: 20, cached: 60 }
})

/** The order of a stream's phases: part types with each run of the same delta collapsed to one. */
export const streamPhases = (parts: ReadonlyArray<{ readonly type: string }>): ReadonlyArray<string> => {
  const types = parts.map((part) => part.type)
  return types.filter((type, i) => !(type.endsWith("-delta") && types[i - 1] === type))
}
