/** The kernel's decision keys (seed 002): every event in the EventLog is recorded under one. */
export const decisionNamespaces = {
  "kernel.tool.dispatch": "Tool execution dispatch decision",
  "kernel.tool.policy.blocked": "Policy blocked a tool call",
  "kernel.tool.approval": "A person approved or denied a tool call, or nobody answered in time",
  "kernel.budget.exceeded": "Run budget consumed",
  "kernel.memory.put": "Value written to memory",
  "kernel.memory.get": "Value read from memory",
  "kernel.run.started": "Agent run started",
  "kernel.run.finished": "Agent run completed"
} as const

export type DecisionKey = keyof typeof decisionNamespaces

export const decisionKeys = Object.keys(decisionNamespaces) as ReadonlyArray<DecisionKey>
