// `kern status` of a running agent in one request (dist/quickStatusAsk.cjs, loaded by bin/kern.js before anything
// else of status): the agent already has what status shows loaded (the config's schemas, kern.db's reading code, its
// live state), so it makes the whole output (POST /status/report, src/channels/web/statusReport.ts, the same code the
// command line's own report runs) and this client only finds it, asks and prints. It loads no Effect, no schema and
// no SQLite: node's http module, and only once the folder's lock names a live holder with an address.
//
// A stopped agent's report the last ask kept, while nothing it shows has changed, is printed here too
// (src/quick/statusCache.ts).
//
// Whatever it cannot settle for sure it leaves to `local` (src/quick/status.ts, the command line's own report): a
// command line it does not parse, a folder without config.json, no live holder, no token, an agent not on this
// machine's loopback (the request carries the variables the report reads), and any answer but 200 with an output (an older agent,
// a hosted folder, another process holding the lock, a broken config, an agent that does not answer in time).
import * as NodeFs from "node:fs"
import type * as NodeHttp from "node:http"
import * as NodePath from "node:path"
import { parseDotenv } from "../config/dotenv.js"
import { agentPaths } from "../config/paths.js"
import { reportEnvironment } from "../config/reportEnvironment.js"
import { holderRunning } from "../storage/processState.js"
import { printOutput } from "./printOutput.js"
import { statusWords } from "./statusArgs.js"
import { keptOutput } from "./statusCache.js"

/**
 * node's http module, loaded only when the agent is asked. bin/kern.js runs this bundle as a vm.Script, where import()
 * has no loader: node's getBuiltinModule (node 20.16 on) needs none; elsewhere the import fails and `local` answers.
 */
const loadHttp = (): Promise<typeof NodeHttp> =>
  typeof process.getBuiltinModule === "function" ? Promise.resolve(process.getBuiltinModule("node:http")) : import("node:http")

/** How long the agent has to answer before the command line makes the report itself. */
const answerTimeoutMs = 10_000

/** Hosts the request may go to: it carries the variables the report reads, so never off this machine. */
const loopback = new Set(["127.0.0.1", "localhost", "[::1]"])

const readIfExists = (file: string): string | undefined => {
  try {
    return NodeFs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
}

/** The lock's live holder with an address, as src/storage/LockFile.ts reads it; none for anything else. */
const liveAddress = (lockFile: string): string | undefined => {
  const text = readIfExists(lockFile)
  if (text === undefined) return undefined
  let holder: unknown
  try {
    holder = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof holder !== "object" || holder === null) return undefined
  const { address, host, pid, processStart } = holder as Record<string, unknown>
  if (typeof address !== "string" || typeof host !== "string" || typeof pid !== "number" || !Number.isInteger(pid) || pid <= 0) return undefined
  if (processStart !== undefined && typeof processStart !== "string") return undefined
  return holderRunning({ pid, host, processStart }) ? address : undefined
}

/** The agent's token as the command line's client takes it: `.kern/.env` over the inherited environment. */
const tokenOf = (envFile: string): string | undefined => {
  const text = readIfExists(envFile)
  const token = (text === undefined ? undefined : parseDotenv(text).values["KERN_AUTH_TOKEN"]) ?? process.env["KERN_AUTH_TOKEN"]
  return token === undefined || token === "" ? undefined : token
}

/** The output the agent answered, when the body is one. */
const outputOf = (body: string): { readonly stdout: string; readonly failure: string | null } | undefined => {
  try {
    const parsed: unknown = JSON.parse(body)
    if (typeof parsed !== "object" || parsed === null) return undefined
    const { failure, stdout } = parsed as Record<string, unknown>
    return typeof stdout === "string" && (failure === null || typeof failure === "string") ? { stdout, failure } : undefined
  } catch {
    return undefined
  }
}

/**
 * Runs `kern <argv>` when it is a `kern status` of a folder a live agent on this machine serves, and says whether it
 * took it; from then on, any doubt is settled by `local`.
 */
export const run = (argv: ReadonlyArray<string>, local: () => void): boolean => {
  if (argv[0] !== "status") return false
  const words = statusWords(argv.slice(1))
  if (words === undefined || (words.dir !== undefined && words.dirFlag !== undefined && words.dir !== words.dirFlag)) return false
  const dir = words.dir ?? words.dirFlag ?? "."
  const paths = agentPaths(dir)
  const configText = readIfExists(paths.configFile)
  if (configText === undefined) return false
  const address = liveAddress(paths.lockFile)
  if (address === undefined) {
    // A stopped agent's report, kept by the last ask while nothing it shows has changed (src/quick/statusCache.ts).
    const kept = typeof __dirname === "string"
      ? keptOutput({ dir, json: words.json, env: process.env, bundle: NodePath.join(__dirname, "quickStatus.cjs") })
      : undefined
    if (kept === undefined) return false
    printOutput(kept)
    return true
  }
  let url: URL
  try {
    // Under the address's own path, as the command line's client joins its routes (a hosted agent's is its host's
    // /agents/<name>; the agent then answers 404 for a hosted folder, and `local` asks the host).
    url = new URL(`${address.replace(/\/+$/, "")}/status/report`)
  } catch {
    return false
  }
  if (url.protocol !== "http:" || !loopback.has(url.hostname)) return false
  const token = tokenOf(paths.envFile)
  if (token === undefined) return false
  // Only the variables the report reads (src/config/reportEnvironment.ts): the rest of the environment stays here.
  const body = JSON.stringify({ dir, cwd: process.cwd(), env: reportEnvironment(process.env, configText), json: words.json })
  let settled = false
  const fallBack = () => {
    if (settled) return
    settled = true
    local()
  }
  void loadHttp().then((http) => {
    const request = http.request(url, {
      method: "POST",
      // One request: no socket kept open that the process would wait on before it exits.
      agent: false,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      timeout: answerTimeoutMs
    }, (response: NodeHttp.IncomingMessage) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("error", fallBack)
      response.on("end", () => {
        const output = response.statusCode === 200 ? outputOf(Buffer.concat(chunks).toString("utf8")) : undefined
        if (output === undefined) return fallBack()
        if (settled) return
        settled = true
        printOutput(output)
      })
    })
    request.on("timeout", () => request.destroy())
    request.on("error", fallBack)
    request.end(body)
  }, fallBack)
  return true
}
