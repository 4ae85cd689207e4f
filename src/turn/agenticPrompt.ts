import type { Prompt } from "@effect/ai"
import { Either, JSONSchema } from "effect"
import { parseJsonText } from "../config/json.js"
import { dataText } from "../kernel/resultText.js"
import type { RegisteredTool } from "../kernel/ToolRegistry.js"
import { PlanStep, type PlanDraft, type StepArtifact } from "./agenticRecord.js"

/** How much of a step's result the record keeps and the critic reads. */
export const summaryChars = 500

export const shorten = (text: string, max = summaryChars): string =>
  text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more chars]`

/** A tool's arguments as JSON Schema; the declared argument list when the Schema has no JSON form. */
const argumentSchema = (tool: RegisteredTool): unknown =>
  Either.getOrElse(
    Either.try(() => JSONSchema.make(tool.parameters)),
    () => tool.spec.argsSchema.map((arg) => ({ name: arg.name, type: arg.type, required: arg.required }))
  )

/** What the planner is shown of each tool: id, description and argument schema. */
export const toolCatalog = (tools: ReadonlyArray<RegisteredTool>): string =>
  tools.length === 0
    ? "(no tools are available)"
    : tools
      .map((tool) =>
        [
          `- id: ${tool.spec.toolId}`,
          `  description: ${tool.spec.description || tool.spec.name}`,
          `  arguments (JSON Schema): ${JSON.stringify(argumentSchema(tool))}`
        ].join("\n")
      )
      .join("\n")

export const planPrompt = (goal: string, tools: ReadonlyArray<RegisteredTool>): Prompt.RawInput => [
  {
    role: "system",
    content: [
      "You plan tool calls for an agent. Answer with a plan: an ordered list of steps, each naming one of the",
      "available tools by its exact id, its arguments as a JSON object written as text, and its purpose.",
      "Use as few steps as the goal needs; steps run in order and cannot see each other's results.",
      "",
      "Available tools:",
      toolCatalog(tools)
    ].join("\n")
  },
  { role: "user", content: `Goal: ${goal}` }
]

const parseArgs = (argsJson: string): unknown =>
  // Text that is not JSON is passed on as it is: the executor rejects it with a VALIDATION_ERROR the record keeps.
  Either.getOrElse(parseJsonText(argsJson), () => argsJson)

export const planSteps = (draft: PlanDraft): ReadonlyArray<PlanStep> =>
  draft.steps.map((step) => new PlanStep({ toolId: step.toolId, args: parseArgs(step.argsJson), purpose: step.purpose }))

const artifactLine = (step: StepArtifact, plan: ReadonlyArray<PlanStep>): string => {
  const purpose = plan[step.index]?.purpose ?? ""
  const outcome = step.ok ? `ok: ${step.summary ?? ""}` : `failed: ${step.error ?? "unknown error"}`
  return `${step.index + 1}. ${step.toolId} (${purpose}) ${outcome}`
}

export const critiquePrompt = (
  goal: string,
  plan: ReadonlyArray<PlanStep>,
  steps: ReadonlyArray<StepArtifact>
): Prompt.RawInput => [
  {
    role: "system",
    content: "You review an agent's work. Judge whether the tool results achieve the goal. " +
      "Answer with passed (true or false) and short notes on what was achieved and what is missing."
  },
  {
    role: "user",
    content: [
      `Goal: ${goal}`,
      "",
      "Plan:",
      ...plan.map((step, i) => `${i + 1}. ${step.toolId} ${JSON.stringify(step.args)} (${step.purpose})`),
      "",
      "Results:",
      ...(steps.length === 0 ? ["(no steps ran)"] : steps.map((step) => artifactLine(step, plan)))
    ].join("\n")
  }
]

/** A result's text for the record. */
export const resultSummary = (data: unknown): string => shorten(dataText(data))
