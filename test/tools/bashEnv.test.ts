import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodePath from "node:path"
import * as AgentConfig from "../../src/config/AgentConfig.js"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import * as Database from "../../src/storage/Database.js"
import { bash } from "../../src/tools/bash.js"
import * as ToolServices from "../../src/tools/ToolServices.js"
import { makeTempDir, writeFiles } from "./support.js"

// The operator's shell as kern inherits it: provider keys and tokens kern never asked for, beside what a shell needs.
const inherited = {
  PATH: process.env["PATH"] ?? "/usr/bin:/bin",
  HOME: "/home/operator",
  USER: "operator",
  LOGNAME: "operator",
  SHELL: "/bin/bash",
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  LC_TIME: "C",
  TERM: "xterm",
  TZ: "Europe/Berlin",
  TMPDIR: "/tmp",
  OPENAI_API_KEY: "sk-inherited-openai-0123456789",
  ANTHROPIC_API_KEY: "sk-ant-inherited-0123456789",
  GITHUB_TOKEN: "ghp_inheritedtoken0123456789",
  AWS_SECRET_ACCESS_KEY: "aws-secret-0123456789",
  NPM_TOKEN: "npm_inherited0123456789",
  PROJECT_MIRROR: "https://mirror.example",
  EDITOR: "vim"
}

/** The tool services of an agent folder whose config lists `bashEnv`, over the inherited environment above. */
const agent = (bashEnv: ReadonlyArray<string> | undefined) => {
  const dir = NodePath.join(makeTempDir("kern-bashenv-"), "agent")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({ provider: "openai", ...(bashEnv === undefined ? {} : { bashEnv }) }),
    ".kern/.env": "OPENROUTER_API_KEY=sk-or-from-dotenv-0123456789\nDOTENV_ONLY=visible-to-kern-only\n"
  })
  const config = AgentConfig.layer(dir).pipe(
    Layer.provide(Layer.succeed(ProcessEnv, inherited)),
    Layer.provide(NodeContext.layer)
  )
  return ToolServices.layer.pipe(
    Layer.provideMerge(Database.layerMemory),
    Layer.provideMerge(KnownSecrets.layer),
    Layer.provideMerge(config),
    Layer.provideMerge(NodeContext.layer),
    Layer.orDie
  )
}

const childEnv = (layer: ReturnType<typeof agent>) =>
  Effect.map(bash({ command: "env" }).pipe(Effect.provide(layer)), (out) =>
    Object.fromEntries(out.stdout.split("\n").filter((line) => line.includes("=")).map((line) => {
      const eq = line.indexOf("=")
      return [line.slice(0, eq), line.slice(eq + 1)]
    })))

describe("bash environment", () => {
  it.live("a minimal environment: no inherited *_API_KEY, *_TOKEN or other variables, nothing from .kern/.env", () =>
    Effect.gen(function*() {
      const env = yield* childEnv(agent(undefined))
      const leaked = Object.keys(env).filter((name) => /_API_KEY$|_TOKEN$|SECRET/.test(name))
      assert.deepStrictEqual(leaked, [])
      for (const name of ["OPENROUTER_API_KEY", "DOTENV_ONLY", "PROJECT_MIRROR", "EDITOR"]) assert.notProperty(env, name)
      for (const name of ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_TIME", "TERM", "TZ", "TMPDIR"]) {
        assert.strictEqual(env[name], inherited[name as keyof typeof inherited], name)
      }
    }))

  it.live("the names in bashEnv are passed through, and only they", () =>
    Effect.gen(function*() {
      const env = yield* childEnv(agent(["PROJECT_MIRROR", "GITHUB_TOKEN", "NOT_SET_ANYWHERE"]))
      assert.strictEqual(env["PROJECT_MIRROR"], "https://mirror.example")
      assert.strictEqual(env["GITHUB_TOKEN"], "ghp_inheritedtoken0123456789")
      assert.notProperty(env, "NOT_SET_ANYWHERE")
      assert.notProperty(env, "OPENAI_API_KEY")
      assert.notProperty(env, "NPM_TOKEN")
      assert.notProperty(env, "EDITOR")
    }))

  it.live("a secret kern knows is withheld even when bashEnv names it (`$KEY` in a command would slip past the argument check)", () =>
    Effect.gen(function*() {
      // OPENROUTER_API_KEY and DOTENV_ONLY come from .kern/.env; OPENAI_API_KEY is the configured provider's key.
      const env = yield* childEnv(agent(["OPENROUTER_API_KEY", "DOTENV_ONLY", "OPENAI_API_KEY", "PROJECT_MIRROR"]))
      assert.notProperty(env, "OPENROUTER_API_KEY")
      assert.notProperty(env, "DOTENV_ONLY")
      assert.notProperty(env, "OPENAI_API_KEY")
      assert.strictEqual(env["PROJECT_MIRROR"], "https://mirror.example")
    }))
})
