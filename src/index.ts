// The library API: what an Effect program imports to embed kern's layers.
export * as AgentConfig from "./config/AgentConfig.js"
export { ConfigError } from "./config/errors.js"
export { agentPaths, type AgentPaths } from "./config/paths.js"
export { ProcessEnv } from "./config/ProcessEnv.js"
export * as KernConfigSchema from "./config/schema.js"
export { Git, GitError } from "./memory/Git.js"
export { initAgent, InitError, type InitOptions, type InitReport } from "./memory/initAgent.js"
export * as Database from "./storage/Database.js"
