import { describe, expect, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import { Context, Effect, PubSub, Queue } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { request, startServer, token } from "../channels/web/harness.js"
import type { ApprovalRequest } from "../../src/kernel/ApprovalGate.js"
import { Approvals } from "../../src/runtime/Approvals.js"
import { JobStore } from "../../src/tools/JobStore.js"
import { PairingStore } from "../../src/users/PairingStore.js"
import { runKernIn } from "../support/inProcessCli.js"
import { makeTempDir } from "../support/tempDir.js"

// `kern status` of a running agent is made by the agent (POST /status/report, src/quick/statusAsk.ts asks it) with
// the report code the command line runs itself (src/channels/web/statusReport.ts). On a corpus of states, the agent's
// output is the command line's, byte for byte: stdout, the failure line on stderr, the exit code. Only the clock's
// figures (the server's uptime) may differ between the two asks.

const baseEnv = { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp" }

/** The uptime and a running job's age, which the two asks read a moment apart. */
const timeless = (text: string) =>
  text.replace(/, up \d+ s/g, ", up N s").replace(/"(uptimeMs|ageMs)":\d+/g, "\"$1\":N").replace(/^( {2}\d+ )\S+ /gm, "$1AGE ")

/** A call of bash that waits for the operator. */
const bashApproval: ApprovalRequest = {
  spec: { toolId: "bash", name: "Bash", description: "", safetyClass: "DESTRUCTIVE" } as unknown as ApprovalRequest["spec"],
  args: { command: "rm -rf build" },
  reason: "bash is DESTRUCTIVE",
  runId: "run_1",
  agentName: "agent",
  userSid: "operator",
  origin: { interface: "cli", channel: "terminal", userId: "operator" }
}

/** The agent's answer to POST /status/report. */
const askAgent = (base: string, body: Record<string, unknown>, auth = true) =>
  request(`${base}/status/report`, {
    method: "POST",
    headers: { ...(auth ? { authorization: `Bearer ${token}` } : {}), "content-type": "application/json" },
    body: JSON.stringify(body)
  })

/**
 * The same command line run by the command line itself, and by the agent, compared as a user sees them. The agent may
 * write kern.db meanwhile (its start's background passes change the database's size): the agent's report is compared
 * with one the command line made just before it and read the same just after it.
 */
const compare = (base: string, dir: string, json: boolean, env: Record<string, string>) =>
  Effect.gen(function*() {
    const status = Effect.promise(() => runKernIn(["status", dir, ...(json ? ["--json"] : [])], { env }))
    for (let attempt = 1;; attempt++) {
      const local = yield* status
      const answer = yield* askAgent(base, { dir, cwd: process.cwd(), env: { ...baseEnv, ...env }, json })
      const again = yield* status
      if (timeless(again.stdout) !== timeless(local.stdout) && attempt < 50) continue
      expect(answer.status, answer.text).toBe(200)
      const output = answer.json as { readonly stdout: string; readonly failure: string | null }
      expect(timeless(`${output.stdout}\n`)).toBe(timeless(local.stdout))
      expect(output.failure === null ? "" : `kern: ${output.failure}\n`).toBe(local.stderr)
      expect(output.failure === null ? 0 : 1).toBe(local.status)
      return { local, output }
    }
  })

/** A background job running `sleep 600` for 5 s, as the agent's JobStore records one: its id. */
const addSleepingJob = (context: Context.Context<JobStore>, dir: string) =>
  Context.get(context, JobStore).add({
    command: "sleep 600",
    conversation: "operator",
    originInterface: "cli",
    originChannel: "terminal",
    originUser: "operator",
    sessionId: "s",
    tag: "",
    outputFile: NodePath.join(dir, ".kern", "jobs", "1.out"),
    startedAtMs: Date.now() - 5_000
  })

describe("POST /status/report: the running agent's `kern status` is the command line's own", () => {
  it.live("text and --json, problems and none, a relative folder, a config edited since the start, another name, channel tokens", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, context, dir } = yield* startServer({ config: { prices: { m: { input: 0, output: 0 } } }, recordAddress: true })
      const env = { OPENROUTER_API_KEY: "sk-test", KERN_AUTH_TOKEN: token }

      // No problem: exit 0, the server's line from the agent itself.
      const plain = yield* compare(base, dir, false, env)
      expect(plain.local.stdout).toContain("problems:  none")
      expect(plain.local.stdout).toMatch(/server: {4}http:\/\/127\.0\.0\.1:\d+, up \d+ s/)
      yield* compare(base, dir, true, env)

      // What waits: an approval the agent asks (by id, from the agent itself), a background job running and a
      // stranger's pairing (kern.db, which the agent reads through its own stores).
      const approvals = Context.get(context, Approvals)
      const requests = yield* PubSub.subscribe(approvals.requests)
      yield* Effect.forkScoped(approvals.ask(bashApproval))
      const pending = yield* Queue.take(requests)
      const job = yield* addSleepingJob(context, dir)
      const pairing = yield* Context.get(context, PairingStore).request({ interface: "telegram", userId: "42", chatId: "42", displayName: "Alice" })
      const waiting = yield* compare(base, dir, false, env)
      expect(waiting.local.stdout).toContain(`approvals: 1 waiting`)
      expect(waiting.local.stdout).toContain(`  ${pending.id} bash, asked by operator, denied at `)
      expect(waiting.local.stdout).toContain(`jobs:      1 running`)
      expect(waiting.local.stdout).toMatch(new RegExp(`\\n {2}${job} \\S+ sleep 600\\n`))
      expect(waiting.local.stdout).toContain(`  ${pairing.code} telegram:42 (Alice)`)
      yield* compare(base, dir, true, env)

      // Problems (no API key in the client's environment), a channel whose token is set but that the agent did not start.
      const troubled = yield* compare(base, dir, false, { KERN_AUTH_TOKEN: token, TELEGRAM_BOT_TOKEN: "123:abc" })
      expect(troubled.local.stdout).toContain("no API key")
      expect(troubled.local.stdout).toContain("telegram:  off (the running agent did not start it")
      expect(troubled.local.status).toBe(1)
      yield* compare(base, dir, true, { KERN_AUTH_TOKEN: token })

      // The folder as named from here (relative), and a config edited since the agent started (an unknown key, MCP
      // servers, recall off): read fresh, as the command line reads it.
      const relative = NodePath.relative(process.cwd(), dir)
      const configFile = NodePath.join(dir, ".kern", "config.json")
      const config = JSON.parse(NodeFs.readFileSync(configFile, "utf8"))
      NodeFs.writeFileSync(
        configFile,
        JSON.stringify({ ...config, recall: false, colour: "blue", mcpServers: { files: { command: "true" } } })
      )
      const edited = yield* compare(base, relative, false, env)
      expect(edited.local.stdout).toContain(`${NodePath.join(relative, ".kern", "config.json")}`)
      expect(edited.local.stdout).toContain("recall:    off")
      yield* compare(base, relative, true, env)

      // Another name (KERN_NAME): the command line does not take the agent there for the folder's; neither does the report.
      const renamed = yield* compare(base, dir, false, { ...env, KERN_NAME: "someone-else" })
      expect(renamed.local.stdout).not.toContain("server:")
      // Without the token, the command line cannot ask the agent: no server line either way.
      const tokenless = yield* compare(base, dir, false, { OPENROUTER_API_KEY: "sk-test" })
      expect(tokenless.local.stdout).not.toContain("server:")

      // The agent reads kern.db over its own connection only while the folder's config names the database it holds:
      // one that now names a PostgreSQL server (nothing listens there) is read as the command line reads it.
      NodeFs.writeFileSync(
        configFile,
        JSON.stringify({ ...config, database: { url: "postgres://kern@127.0.0.1:9/kern" } })
      )
      const moved = yield* compare(base, dir, false, env)
      expect(moved.local.stdout).toContain("postgres://kern@127.0.0.1:9/kern")
      expect(moved.local.status).toBe(1)
    })))

  it.live("a change to kern.db by another connection is in the next report (the agent keeps its reads only while kern.db is unchanged)", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, context, dir } = yield* startServer({ recordAddress: true })
      const env = { OPENROUTER_API_KEY: "sk-test", KERN_AUTH_TOKEN: token }
      const job = yield* addSleepingJob(context, dir)
      const pairing = yield* Context.get(context, PairingStore).request({ interface: "telegram", userId: "42", chatId: "42", displayName: "Alice" })
      const before = yield* compare(base, dir, false, env)
      expect(before.local.stdout).toContain("jobs:      1 running")
      expect(before.local.stdout).toContain(`  ${pairing.code} telegram:42 (Alice)`)
      // Asked twice unchanged: the same report.
      yield* compare(base, dir, false, env)
      // Another process's writes (a connection of its own, not the agent's): the job ended, the pairing gone.
      const other = new BetterSqlite3(NodePath.join(dir, ".kern", "kern.db"))
      other.prepare("UPDATE background_jobs SET state = 'finished', ended_at_ms = ?, exit_code = 0 WHERE id = ?").run(Date.now(), job)
      other.prepare("DELETE FROM pairings").run()
      other.close()
      const after = yield* compare(base, dir, false, env)
      expect(after.local.stdout).not.toContain("jobs:      1 running")
      expect(after.local.stdout).not.toContain(pairing.code)
    })))

  it.live("answers only its token's holder, only for its own folder", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, dir } = yield* startServer({ recordAddress: true })
      const body = { dir, cwd: process.cwd(), env: baseEnv, json: false }
      expect((yield* askAgent(base, body, false)).status).toBe(401)
      const elsewhere = yield* askAgent(base, { ...body, dir: makeTempDir() })
      expect(elsewhere.status).toBe(404)
      expect(elsewhere.text).toContain("kern status makes this report itself")
      expect((yield* askAgent(base, { ...body, env: { PATH: 1 } })).status).toBe(400)
    })))
})
