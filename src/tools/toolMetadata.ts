/** How dangerous a tool is; the kernel's policy decides from this (seed 002). */
export type SafetyClass = "READ_ONLY" | "LOCAL_WRITE" | "NETWORK" | "DESTRUCTIVE"

/** The lowest `toolScope` (config) under which the tool is offered. */
export type ToolScopeLevel = "read" | "write" | "full"

/** What the kernel registry needs to know about a built-in tool besides its argument schema and handler. */
export interface ToolMetadata {
  readonly toolId: string
  readonly name: string
  /** What the model reads to decide when and how to call the tool. */
  readonly description: string
  readonly safetyClass: SafetyClass
  readonly idempotent: boolean
  /** The kernel's timeout for one call, 100..60000 ms (bash asks for more per call: see bashKernelTimeoutMs). */
  readonly timeoutMs: number
  readonly scope: ToolScopeLevel
}
