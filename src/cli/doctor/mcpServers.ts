import { Duration, Effect, Either } from "effect"
import * as NodeFs from "node:fs"
import type { LoadedConfig } from "../../config/AgentConfig.js"
import { counted } from "../../config/counted.js"
import { fromConfig } from "../../config/KnownSecrets.js"
import { redactSecretsInText } from "../../kernel/secretGuard.js"
import { connect, newStderrBuffer } from "../../mcp/connection.js"
import { type CheckResult, type Finding, problem, resultOf } from "./Check.js"

/** Longest the doctor waits for a server to start and list its tools (its own `timeoutMs` when shorter). */
export const mcpTimeout = Duration.seconds(10)

const tailLines = 3

/**
 * Each enabled MCP server started (or reached) on a connection of the doctor's own, as `kern mcp list` does without
 * a running agent, and asked for its tools within a timeout; all at once. Its processes end with the check (the
 * connection's scope reaps them by their tag): a running agent's own connection is not touched.
 */
export const mcpCheck = (loaded: LoadedConfig): Effect.Effect<CheckResult> =>
  Effect.gen(function*() {
    const servers = Object.entries(loaded.config.mcpServers).filter(([, server]) => server.enabled)
    if (servers.length === 0) return resultOf("mcp", [], "no MCP server configured")
    const secrets = fromConfig(loaded).secrets
    const root = yield* Effect.sync(() => NodeFs.realpathSync(loaded.paths.dir))
    const outcomes = yield* Effect.forEach(servers, ([name, config]) =>
      Effect.gen(function*() {
        const stderr = newStderrBuffer()
        const timeout = Duration.min(mcpTimeout, Duration.millis(config.timeoutMs))
        const listed = yield* Effect.either(Effect.scoped(
          connect({ name, config, env: loaded.env, root, stderr, connectTimeoutMs: Duration.toMillis(timeout) }).pipe(
            Effect.map((connection) => connection.tools.length),
            Effect.timeoutFail({ duration: timeout, onTimeout: () => `it did not start and list its tools within ${Duration.format(timeout)}` }),
            Effect.mapError((error) => typeof error === "string" ? error : error.detail)
          )
        ))
        if (Either.isRight(listed)) return Either.right(`${name} (${counted(listed.right, "tool")})`)
        const said = redactSecretsInText(stderr.text(), secrets).trimEnd().split("\n").slice(-tailLines).join(" | ")
        const what = "command" in config ? `mcpServers.${name}.command ("${config.command}") and args` : `mcpServers.${name}.url`
        return Either.left(problem(
          `MCP server "${name}" failed: ${redactSecretsInText(listed.left, secrets)}${said === "" ? "" : ` (its stderr: ${said})`}`,
          `check ${what} in .kern/config.json (kern mcp list shows it again), or set "enabled": false`
        ))
      }), { concurrency: "unbounded" })
    const findings: Array<Finding> = outcomes.flatMap((outcome) => Either.isLeft(outcome) ? [outcome.left] : [])
    const working = outcomes.flatMap((outcome) => Either.isRight(outcome) ? [outcome.right] : [])
    return resultOf("mcp", findings, `${working.join(", ")} started and listed ${working.length === 1 ? "its tools" : "their tools"}`)
  })
