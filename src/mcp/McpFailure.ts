import { Schema } from "effect"

/** An MCP server that could not be reached or used: which server, why, and what it said. */
export class McpFailure extends Schema.TaggedError<McpFailure>()("McpFailure", {
  server: Schema.String,
  reason: Schema.Literal("sdk", "config", "connect", "closed", "unknown-server", "not-connected", "disabled"),
  detail: Schema.String
}) {
  override get message(): string {
    return this.server === "" ? this.detail : `MCP server "${this.server}": ${this.detail}`
  }
}
