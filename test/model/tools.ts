import { Tool, Toolkit } from "@effect/ai"
import { Effect, Schema } from "effect"

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
