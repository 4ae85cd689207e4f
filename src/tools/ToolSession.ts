import { Context } from "effect"

/**
 * The session a tool call belongs to: per-call data, provided with `Effect.provideService` by whoever runs the call
 * (the kernel from its RunContext), never by a layer. Read-before-write and duplicate-output detection key on it.
 */
export class ToolSession extends Context.Tag("kern/tools/ToolSession")<ToolSession, {
  readonly sessionId: string
}>() {}
