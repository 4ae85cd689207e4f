import { Schema } from "effect"

/** One planned tool call: which tool, with what arguments, and why. */
export class PlanStep extends Schema.Class<PlanStep>("PlanStep")({
  toolId: Schema.String,
  args: Schema.Unknown,
  purpose: Schema.String
}) {}

/** What happened when a plan step ran (or why it did not). */
export class StepArtifact extends Schema.Class<StepArtifact>("StepArtifact")({
  index: Schema.Int,
  toolId: Schema.String,
  ok: Schema.Boolean,
  /** The result as text, shortened; present when the step succeeded. */
  summary: Schema.optional(Schema.String),
  /** Why the step failed: the executor's `CODE: message`, or "budget exhausted" when it never ran. */
  error: Schema.optional(Schema.String),
  errorCode: Schema.optional(Schema.String),
  latencyMs: Schema.Number
}) {}

export const CritiqueSource = Schema.Literal("model", "rules", "dry-run")

export class Critique extends Schema.Class<Critique>("Critique")({
  passed: Schema.Boolean,
  notes: Schema.String,
  source: Schema.optionalWith(CritiqueSource, { default: () => "model" as const })
}) {}

/** The whole of one agentic run: goal, plan, what each step did, and the verdict. */
export class RunRecord extends Schema.Class<RunRecord>("RunRecord")({
  runId: Schema.String,
  goal: Schema.String,
  dryRun: Schema.Boolean,
  plan: Schema.Array(PlanStep),
  steps: Schema.Array(StepArtifact),
  critique: Critique
}) {}

/**
 * The plan as the model writes it. Arguments travel as JSON text: providers that enforce strict JSON schemas
 * (OpenAI's structured outputs) refuse an open object, and every tool's arguments differ.
 */
export const PlanDraft = Schema.Struct({
  steps: Schema.Array(Schema.Struct({
    toolId: Schema.String.annotations({ description: "The id of one of the available tools, exactly as listed" }),
    argsJson: Schema.String.annotations({
      description: "The tool's arguments as a JSON object, written as text (\"{}\" when it takes none)"
    }),
    purpose: Schema.String.annotations({ description: "Why this step serves the goal, in one sentence" })
  })).annotations({ description: "The tool calls to make, in order; empty when no tool is needed" })
}).annotations({ identifier: "Plan" })
export type PlanDraft = typeof PlanDraft.Type

/** The model's verdict on a run. */
export const Verdict = Schema.Struct({
  passed: Schema.Boolean.annotations({ description: "Whether the results achieve the goal" }),
  notes: Schema.String.annotations({ description: "What was achieved and what is missing, briefly" })
}).annotations({ identifier: "Critique" })
export type Verdict = typeof Verdict.Type
