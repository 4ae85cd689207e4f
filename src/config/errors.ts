import { Schema } from "effect"

/** A configuration value that cannot be used: names where it came from, the key, what was expected and found. */
export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  source: Schema.String,
  key: Schema.optional(Schema.String),
  expected: Schema.String,
  found: Schema.String,
  /** For a key kern does not know: the known one it most likely misspells. */
  didYouMean: Schema.optional(Schema.String)
}) {
  override get message(): string {
    if (this.didYouMean !== undefined) {
      return `${this.source}: unknown key "${this.key ?? ""}": did you mean "${this.didYouMean}"? ${this.expected}`
    }
    const where = this.key === undefined ? this.source : `${this.source}: key "${this.key}"`
    return `${where}: expected ${this.expected}, found ${this.found}`
  }
}

/** A folder `kern init` has not set up: no `.kern/config.json`. */
export class NotAnAgentFolder extends Schema.TaggedError<NotAnAgentFolder>()("NotAnAgentFolder", {
  dir: Schema.String
}) {
  override get message(): string {
    return `${this.dir} is not an agent folder (no .kern/config.json); run \`kern init ${this.dir}\` first`
  }
}
