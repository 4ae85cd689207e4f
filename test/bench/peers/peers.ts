// The peers the benchmark runs: each installed from npm into a temporary folder of its own, as a user installs it,
// then pointed at the same fake model (an OpenAI-compatible Chat Completions server on 127.0.0.1) and sent "hi".
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { failureReason, type Invocation, measure } from "./measure.js"

/** Where a peer is installed and what it talks to. */
export interface PeerContext {
  /** A temporary folder of the peer's own: its install, its HOME. */
  readonly work: string
  /** The fake model's API root, e.g. `http://127.0.0.1:41234/v1`. */
  readonly baseURL: string
  /** The kern repository (kern is packed from it). */
  readonly repo: string
  readonly log: (line: string) => void
}

export interface Installed {
  readonly version: string
  readonly notes: ReadonlyArray<string>
  /** Makes a fresh project/agent folder in `runDir` (not timed) and says how to send it "hi". */
  readonly prepare: (runDir: string) => Promise<Invocation>
}

export interface Peer {
  readonly name: string
  /** Rejects with the reason the peer cannot be installed or run here. */
  readonly install: (context: PeerContext) => Promise<Installed>
}

export const model = "bench-model"
const apiKey = "sk-bench"
const installTimeoutMs = 20 * 60_000
export const runTimeoutMs = 5 * 60_000

/** Runs a setup command (npm, a build, `kern init`); rejects with what it printed when it fails. */
const setup = async (what: string, invocation: Omit<Invocation, "timeoutMs">, timeoutMs = installTimeoutMs) => {
  const result = await measure({ ...invocation, timeoutMs })
  if (result.exitCode !== 0) throw new Error(`${what} failed (${failureReason(result)})`)
  return result
}

/** The environment npm runs with: the user's (its cache, its registry settings). */
const npmEnv = (): Record<string, string> =>
  Object.fromEntries(Object.entries(process.env).flatMap(([name, value]) => (value === undefined ? [] : [[name, value]])))

const npmInstall = async (folder: string, specs: ReadonlyArray<string>, flags: ReadonlyArray<string> = []) => {
  NodeFs.mkdirSync(folder, { recursive: true })
  NodeFs.writeFileSync(NodePath.join(folder, "package.json"), `${JSON.stringify({ private: true })}\n`)
  await setup(`npm install ${specs.join(" ")}`, {
    command: "npm",
    args: ["install", "--no-audit", "--no-fund", "--no-save", ...flags, ...specs],
    cwd: folder,
    env: npmEnv()
  })
}

const versionOf = (packageFolder: string): string => {
  const text = NodeFs.readFileSync(NodePath.join(packageFolder, "package.json"), "utf8")
  const parsed: unknown = JSON.parse(text)
  return typeof parsed === "object" && parsed !== null && "version" in parsed && typeof parsed.version === "string"
    ? parsed.version
    : "unknown"
}

/** What each peer's process gets: a PATH, a HOME of the peer's own (kept across its runs, as a user's is). */
const baseEnv = (home: string): Record<string, string> => ({
  PATH: process.env["PATH"] ?? "/usr/bin:/bin",
  HOME: home,
  LANG: process.env["LANG"] ?? "C.UTF-8",
  // `kern init` and autoCommit commit to the agent's repository; opencode's snapshots use git too.
  GIT_AUTHOR_NAME: "bench",
  GIT_AUTHOR_EMAIL: "bench@example.invalid",
  GIT_COMMITTER_NAME: "bench",
  GIT_COMMITTER_EMAIL: "bench@example.invalid"
})

const homeOf = (context: PeerContext) => {
  const home = NodePath.join(context.work, "home")
  NodeFs.mkdirSync(home, { recursive: true })
  return home
}

/**
 * kern packed from this repository (`npm pack`, without its build scripts: the benchmark never builds the repo's
 * dist/), installed from the tarball with its production dependencies, then `kern init` per run and
 * `kern chat <agent> -m hi`, in-process (no background agent).
 */
export const kern: Peer = {
  name: "kern",
  install: async (context) => {
    context.log("packing kern…")
    const packed = await setup("npm pack", {
      command: "npm",
      args: ["pack", "--ignore-scripts", "--json", "--pack-destination", context.work],
      cwd: context.repo,
      env: npmEnv()
    })
    const listing: unknown = JSON.parse(packed.stdout)
    const filename = Array.isArray(listing) && typeof listing[0]?.filename === "string" ? String(listing[0].filename) : undefined
    if (filename === undefined) throw new Error(`npm pack printed no tarball name: ${packed.stdout.slice(0, 200)}`)
    const folder = NodePath.join(context.work, "install")
    context.log("installing kern from its tarball (production dependencies; better-sqlite3 may compile)…")
    await npmInstall(folder, [NodePath.join(context.work, filename)], ["--omit=dev"])
    const installedKern = NodePath.join(folder, "node_modules", "kern")
    const notes: Array<string> = [`installed from \`npm pack\` of ${context.repo} with \`npm install --omit=dev\``]
    if (!NodeFs.existsSync(NodePath.join(installedKern, "dist", "main.cjs"))) {
      // The tarball follows .gitignore (package.json has no `files`), which leaves dist/ out; a tarball install does
      // not run `prepare`. Build into the installed package, with the repo's build script and its esbuild.
      notes.push("the tarball has no dist/ (.gitignore leaves it out, package.json has no `files`): built into the installed package with scripts/build.mjs --out")
      context.log("the tarball has no build: building kern into the installed package…")
      await setup("scripts/build.mjs --out", {
        command: process.execPath,
        args: [NodePath.join(context.repo, "scripts", "build.mjs"), "--out", installedKern],
        cwd: context.repo,
        env: npmEnv()
      })
    }
    const bin = NodePath.join(folder, "node_modules", ".bin", "kern")
    const home = homeOf(context)
    const env = { ...baseEnv(home), OPENROUTER_API_KEY: apiKey }
    return {
      version: versionOf(installedKern),
      notes,
      prepare: async (runDir) => {
        const agent = NodePath.join(runDir, "agent")
        await setup("kern init", {
          command: bin,
          args: ["init", agent, "--model", model, "--base-url", context.baseURL],
          cwd: runDir,
          env
        }, runTimeoutMs)
        return { command: bin, args: ["chat", agent, "-m", "hi"], cwd: runDir, env, timeoutMs: runTimeoutMs }
      }
    }
  }
}

/**
 * opencode (`opencode-ai` on npm; its platform binary comes as an optional dependency), with the fake model as a
 * custom OpenAI-compatible provider in the project's opencode.json, and `opencode run hi` in that project. Fetches that
 * would leave the machine and are not part of answering (the models.dev catalogue, self-update, LSP downloads,
 * sharing) are turned off by its own variables; its default plugins are left as a user has them.
 */
export const opencode: Peer = {
  name: "opencode",
  install: async (context) => {
    const folder = NodePath.join(context.work, "install")
    context.log("installing opencode-ai…")
    await npmInstall(folder, ["opencode-ai@latest"])
    const bin = NodePath.join(folder, "node_modules", ".bin", "opencode")
    const home = homeOf(context)
    const env = {
      ...baseEnv(home),
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      OPENCODE_DISABLE_SHARE: "1"
    }
    await setup("opencode --version", { command: bin, args: ["--version"], cwd: folder, env }, runTimeoutMs)
    const config = {
      $schema: "https://opencode.ai/config.json",
      provider: {
        fake: {
          npm: "@ai-sdk/openai-compatible",
          name: "Fake model",
          options: { baseURL: context.baseURL, apiKey },
          models: { [model]: { name: "Bench model" } }
        }
      },
      model: `fake/${model}`,
      autoupdate: false,
      share: "disabled"
    }
    return {
      version: versionOf(NodePath.join(folder, "node_modules", "opencode-ai")),
      notes: ["installed with `npm install opencode-ai@latest`; the fake model is a custom provider (@ai-sdk/openai-compatible) in the project's opencode.json"],
      prepare: async (runDir) => {
        const project = NodePath.join(runDir, "project")
        NodeFs.mkdirSync(project, { recursive: true })
        NodeFs.writeFileSync(NodePath.join(project, "opencode.json"), `${JSON.stringify(config, null, 2)}\n`)
        return { command: bin, args: ["run", "hi"], cwd: project, env, timeoutMs: runTimeoutMs }
      }
    }
  }
}

/**
 * OpenClaw: installed with `--engine-strict`, so a Node it does not support is said at once (it needs Node ≥ 24).
 * Driving its local agent against the fake model is not wired: where it installs, it is reported as not measured.
 */
export const openclaw: Peer = {
  name: "openclaw",
  install: async (context) => {
    const folder = NodePath.join(context.work, "install")
    context.log("installing openclaw…")
    // `@latest`, a tag: with a range, --engine-strict quietly picks an old release whose engines fit (0.0.1, a stub).
    await npmInstall(folder, ["openclaw@latest"], ["--engine-strict"])
    const version = versionOf(NodePath.join(folder, "node_modules", "openclaw"))
    throw new Error(`openclaw ${version} installed, but this benchmark does not yet point its local agent at the fake model`)
  }
}

export const allPeers: ReadonlyArray<Peer> = [kern, opencode, openclaw]
