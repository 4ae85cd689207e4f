import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { keepsVariable } from "../../src/cli/privateEnvironment.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { killedAtEnd, recordedPid } from "../support/backgroundAgent.js"
import { runKern } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"

/** What an operator's shell holds: provider key, cloud and forge tokens, and variables of no special name. */
const operatorEnv = {
  OPENROUTER_API_KEY: "sk-or-operator-provider-key-1234",
  AWS_SECRET_ACCESS_KEY: "aws-fake-secret-0123456789abcdef",
  AWS_ACCESS_KEY_ID: "AKIAFAKEFAKEFAKE0000",
  GITHUB_TOKEN: "ghp_fakefakefakefakefakefake000000",
  KERN_AUTH_TOKEN: "kern-auth-token-fake-000000",
  DATABASE_URL: "postgres://admin:hunter2-fake@db.internal/prod",
  OPERATOR_NOTE: "plain-operator-variable-value",
  LC_ALL: "C.UTF-8",
  TZ: "UTC"
}
const secretNames = Object.keys(operatorEnv).filter((name) => !keepsVariable(name))

/**
 * A bash command that writes, for its parent and every ancestor up to (not including) the test process, the pid
 * and the initial environment the kernel shows for it.
 */
const walkAncestors = (out: string) =>
  `pid=$PPID; while [ "$pid" -gt 1 ] && [ "$pid" != "${process.pid}" ]; do ` +
  `echo "== $pid $(tr '\\0' ' ' < /proc/$pid/cmdline | cut -c1-120)" >> ${out}; ` +
  `tr '\\0' '\\n' < /proc/$pid/environ >> ${out}; echo >> ${out}; ` +
  `pid=$(sed 's/.*) //' /proc/$pid/stat | cut -d' ' -f2); done; echo walked`

describe("the process that runs tools holds no secret in its environment", () => {
  it.live("kern chat: bash reads /proc/<pid>/environ of its parent and every ancestor: no operator variable off the allowlist; the provider key still works", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      const out = NodePath.join(dir, "ancestors.txt")
      yield* server.reply(
        FakeReply.toolCalls([{ id: "c1", name: "bash", args: { command: walkAncestors(out) } }]),
        FakeReply.text("Walked the ancestors.")
      )
      const result = yield* Effect.promise(() => runKern(["chat", "-m", "show me the environment"], { cwd: dir, env: operatorEnv }))
      expect(result.status, result.stderr).toBe(0)
      expect(result.stdout).toContain("Walked the ancestors.")

      const walked = NodeFs.readFileSync(out, "utf8")
      // The walk reached kern itself (bash's parent), not only bash's own shell.
      expect(walked).toMatch(/== \d+ .*kern\.js chat/)
      expect(walked).toContain("PATH=")
      for (const name of secretNames) expect(walked, name).not.toContain(`${name}=`)
      for (const [name, value] of Object.entries(operatorEnv)) {
        if (!keepsVariable(name)) expect(walked, name).not.toContain(value)
      }
      expect(walked).toContain("TZ=UTC")

      // The provider key reached the model server from memory.
      const requests = yield* server.modelRequests
      expect(requests).toHaveLength(2)
      expect(requests[0]!.headers["authorization"]).toBe(`Bearer ${operatorEnv.OPENROUTER_API_KEY}`)
    })), 180_000)

  it.live("kern start: the background agent's bash finds no operator secret in any ancestor's environment", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* killedAtEnd(dir)
      const started = yield* Effect.promise(() => runKern(["start"], { cwd: dir, env: operatorEnv }))
      expect(started.status, started.stderr).toBe(0)
      const daemon = recordedPid(dir)
      const own = NodeFs.readFileSync(`/proc/${daemon}/environ`, "utf8")
      for (const [name, value] of Object.entries(operatorEnv)) {
        if (!keepsVariable(name)) expect(own, name).not.toContain(value)
      }

      const out = NodePath.join(dir, "ancestors.txt")
      yield* server.reply(
        FakeReply.toolCalls([{ id: "c1", name: "bash", args: { command: walkAncestors(out) } }]),
        FakeReply.text("Walked from the background.")
      )
      const chat = yield* Effect.promise(() => runKern(["chat", "-m", "walk"], { cwd: dir, env: operatorEnv }))
      expect(chat.status, chat.stderr).toBe(0)
      expect(chat.stdout).toContain("Walked from the background.")
      const walked = NodeFs.readFileSync(out, "utf8")
      expect(walked).toContain(`== ${daemon} `)
      for (const [name, value] of Object.entries(operatorEnv)) {
        if (!keepsVariable(name)) expect(walked, name).not.toContain(value)
      }
      const requests = yield* server.modelRequests
      expect(requests[0]!.headers["authorization"]).toBe(`Bearer ${operatorEnv.OPENROUTER_API_KEY}`)
      expect((yield* Effect.promise(() => runKern(["stop"], { cwd: dir, env: operatorEnv }))).status).toBe(0)
    })), 240_000)

  it("the allowlist keeps the shell's basics, the locale and git identity, nothing named like a secret", () => {
    for (const name of ["PATH", "HOME", "USER", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "TMPDIR", "XDG_CONFIG_HOME", "GIT_AUTHOR_NAME"]) {
      expect(keepsVariable(name), name).toBe(true)
    }
    for (
      const name of [
        "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "KERN_AUTH_TOKEN", "TELEGRAM_BOT_TOKEN", "SLACK_BOT_TOKEN",
        "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "GH_TOKEN", "NPM_TOKEN", "SSH_AUTH_SOCK", "DATABASE_URL", "HTTPS_PROXY",
        "GIT_ASKPASS", "PATHX", "LD_PRELOAD"
      ]
    ) expect(keepsVariable(name), name).toBe(false)
  })
})
