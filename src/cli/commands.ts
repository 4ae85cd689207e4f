import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type Provider, providers } from "../config/literals.js"
import { pairingCodeProblem, userIdProblem } from "../users/userNames.js"
import { resolveDir, withDir } from "./dirs.js"
import { UsageError } from "./errors.js"
import { type CommandDoc, plainUsage } from "./help.js"

// This module only describes the command line; each handler's module is imported when its command runs, so that
// `kern --help` loads nothing else.

// An unknown flag would otherwise be taken for the folder: refuse anything that looks like one.
const folderText = Args.text({ name: "dir" }).pipe(
  Args.mapEffect((value) =>
    value.startsWith("-")
      ? Effect.fail(HelpDoc.p(`Unknown option '${value}' (a folder whose name starts with '-' can be given as ./${value})`))
      : Effect.succeed(value)
  )
)
const dirArg = folderText.pipe(
  Args.withDescription("the agent folder (default: the current folder)"),
  Args.optional
)
const initDirArg = folderText.pipe(Args.withDescription("the folder to create the agent in"), Args.optional)
const dirOption = Options.text("dir").pipe(
  Options.withDescription("the agent folder (same as the positional [dir])"),
  Options.optional
)
const jsonOption = Options.boolean("json").pipe(Options.withDescription("print the result as JSON"))
/** `--wait S`: seconds, 0 or more, `fallback` when not given. */
const waitSeconds = (description: string, fallback: number) =>
  Options.integer("wait").pipe(
    Options.withDescription(description),
    Options.withDefault(fallback),
    Options.mapEffect((seconds) =>
      seconds < 0
        ? Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--wait must be 0 or more seconds, not ${seconds}`)))
        : Effect.succeed(seconds)
    )
  )
const waitOption = waitSeconds("seconds to wait while another kern runs this agent (default 60), then exit 1", 60)

const contractEnforcements = ["off", "observe", "enforce"] as const

const init = Command.make(
  "init",
  {
    dir: initDirArg,
    dirFlag: dirOption,
    name: Options.text("name").pipe(Options.withDescription("the agent's name (default: the folder name)"), Options.optional),
    provider: Options.choice("provider", providers).pipe(
      Options.withDescription("the model provider (default: openrouter)"),
      Options.optional
    ),
    model: Options.text("model").pipe(Options.withDescription("the model id, e.g. openai/gpt-4.1"), Options.optional),
    baseUrl: Options.text("base-url").pipe(
      Options.withDescription("the provider's API base URL (openai-compatible, ollama)"),
      Options.optional
    ),
    apiKeyEnv: Options.text("api-key-env").pipe(
      Options.withDescription("the environment variable that holds the API key"),
      Options.optional
    ),
    embeddingModel: Options.text("embedding-model").pipe(
      Options.withDescription("the embedding model for recall, or \"false\" to turn embeddings off"),
      Options.optional
    ),
    contractEnforcement: Options.choice("contract-enforcement", contractEnforcements).pipe(
      Options.withDescription("tool-contract checks (default: observe); enforce also approves the first baseline"),
      Options.optional
    ),
    noGit: Options.boolean("no-git").pipe(Options.withDescription("do not create a git repository or commit")),
    force: Options.boolean("force").pipe(
      Options.withDescription("re-initialise an existing agent: add what is missing, never overwrite memory")
    ),
    json: jsonOption
  },
  (args) => Effect.flatMap(Effect.promise(() => import("./init.js")), (module) => module.run(args))
).pipe(Command.withDescription("Create an agent folder: memory files, .kern/config.json, .kern/.env and a git repo."))

const hostFlag = (what: string) =>
  Options.boolean("host").pipe(Options.withDescription(`[dir] is a kern serve home (host.json's folder, or its --home) or its host.json: ${what}`))

const status = Command.make(
  "status",
  { dir: dirArg, dirFlag: dirOption, json: jsonOption, host: hostFlag("the host's address, pid, uptime, memory, and each agent's state and problem") },
  (args) =>
    args.host
      ? Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./statusHost.js"), (m) => m.run(resolved)))
      : Effect.flatMap(Effect.promise(() => import("./status.js")), (module) => module.run(args))
).pipe(Command.withDescription(
  "Show an agent's name, provider, model, configuration problems and database size; for an agent kern serve hosts, which host and its state there (passive, waking, live), without waking it."
))

const lazy = <A, R, E>(load: () => Promise<A>, run: (module: A) => Effect.Effect<void, E, R>) =>
  Effect.flatMap(Effect.promise(load), run)

const kernelInfo = Command.make("info", { dir: dirArg, dirFlag: dirOption, json: jsonOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./kernel.js"), (m) => m.info(resolved)))).pipe(
    Command.withDescription("The kernel of an agent: tools by safety class, policy, enforcement, events recorded.")
  )

// The namespaces are the same for every agent; the folder is accepted so that `[dir]`/`--dir` work everywhere.
const kernelNamespaces = Command.make("namespaces", { dir: dirArg, dirFlag: dirOption, json: jsonOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./kernel.js"), (m) => m.namespaces(resolved)))).pipe(
    Command.withDescription("The decision keys every kernel event is recorded under.")
  )

const kernelTools = Command.make("tools", {
  dir: dirArg,
  dirFlag: dirOption,
  json: jsonOption,
  safety: Options.choice("safety", ["read_only", "local_write", "network", "destructive"]).pipe(
    Options.withDescription("only tools at or below this safety class"),
    Options.optional
  ),
  agent: Options.text("agent").pipe(Options.withDescription("only tools this agent may use"), Options.optional)
}, (args) => Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./kernel.js"), (m) => m.tools(resolved)))).pipe(
  Command.withDescription("The registered tools with safety class, idempotency and timeout.")
)

const kernelExec = Command.make("exec", {
  toolId: Args.text({ name: "toolId" }).pipe(Args.withDescription("the tool to run, e.g. read")),
  args: Options.text("args").pipe(
    Options.withDescription("the tool's arguments as a JSON object"),
    Options.withDefault("{}")
  ),
  safetyMode: Options.choice("safety-mode", ["NORMAL", "SAFE", "STRICT"]).pipe(
    Options.withDescription("run under this safety mode instead of the config's"),
    Options.optional
  ),
  dir: dirArg,
  dirFlag: dirOption,
  json: Options.boolean("json").pipe(Options.withDescription("print the whole ToolResult as JSON"))
}, (args) => Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./kernel.js"), (m) => m.exec(resolved)))).pipe(
  Command.withDescription("Run one tool through the executor as the operator (policy, budget, audit all apply).")
)

const kernel = Command.make("kernel").pipe(
  Command.withDescription("Inspect the kernel and run tools through it."),
  Command.withSubcommands([kernelInfo, kernelNamespaces, kernelTools, kernelExec])
)

const surfaceOption = Options.text("surface").pipe(
  Options.withDescription("the contract surface (default: kernel)"),
  Options.withDefault("kernel")
)
const approvedByOption = Options.text("approved-by").pipe(
  Options.withDescription("who approves (recorded with the baseline)"),
  Options.withDefault("local-operator")
)

const guardTools = Command.make("tools", { dir: dirArg, dirFlag: dirOption, json: jsonOption, surface: surfaceOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./runtimeGuard.js"), (m) => m.tools(resolved)))).pipe(
    Command.withDescription("Each tool's contract fingerprint and whether it matches the approved baseline.")
  )

const guardSnapshot = Command.make("snapshot", {
  dir: dirArg,
  dirFlag: dirOption,
  json: jsonOption,
  surface: surfaceOption,
  approvedBy: approvedByOption
}, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./runtimeGuard.js"), (m) => m.snapshot(resolved)))).pipe(
    Command.withDescription("Approve every current tool contract as the baseline (forgets tools that are gone).")
  )

const guardMismatches = Command.make("mismatches", { dir: dirArg, dirFlag: dirOption, json: jsonOption, surface: surfaceOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./runtimeGuard.js"), (m) => m.mismatches(resolved)))).pipe(
    Command.withDescription("Contracts that changed, are new, or are missing since the approved baseline.")
  )

const guardApprove = Command.make("approve-contract", {
  surface: Args.text({ name: "surface" }).pipe(Args.withDescription("the contract surface, e.g. kernel")),
  toolId: Args.text({ name: "toolId" }).pipe(Args.withDescription("the tool whose current contract to approve")),
  dir: dirArg,
  dirFlag: dirOption,
  json: jsonOption,
  approvedBy: approvedByOption
}, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./runtimeGuard.js"), (m) => m.approveContract(resolved)))).pipe(
  Command.withDescription("Approve one tool's current contract.")
)

const runtimeGuard = Command.make("runtime-guard").pipe(
  Command.withDescription("Approve tool contracts and see what changed since the approved baseline."),
  Command.withSubcommands([guardTools, guardSnapshot, guardMismatches, guardApprove])
)

const chat = Command.make("chat", {
  dir: dirArg,
  dirFlag: dirOption,
  message: Options.text("message").pipe(
    Options.withAlias("m"),
    Options.withDescription("the message to send (may be left out when --file is given)"),
    Options.withDefault("")
  ),
  files: Options.text("file").pipe(
    Options.withPseudoName("PATH"),
    Options.repeated,
    Options.withDescription(
      "a file to send with the message (repeatable): an image reaches the model as an image, a PDF as its text " +
        "(and as a file where the provider takes PDFs), a voice note as its transcript; config media caps its size."
    )
  ),
  json: Options.boolean("json").pipe(Options.withDescription("print the turn's events as JSON lines")),
  newSession: Options.boolean("new").pipe(Options.withDescription("start a new session instead of continuing the newest")),
  wait: waitOption
}, (args) => Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./chat.js"), (m) => m.run(resolved)))).pipe(
  Command.withDescription("Send one message (and files) as the operator; the reply streams to stdout (for scripts).")
)

const conversationOption = Options.text("conversation").pipe(
  Options.withDescription("only the sessions of this conversation: main (the operator's), telegram-555, …"),
  Options.optional
)

const sessionsList = Command.make("list", { dir: dirArg, dirFlag: dirOption, json: jsonOption, conversation: conversationOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) =>
    lazy(
      () => import("./sessions.js"),
      (m) => m.list(resolved, Effect.flatMap(Effect.promise(() => import("./pairedUsers.js")), (names) => names.pairedUsers))
    ))).pipe(
    Command.withDescription(
      "The agent's sessions, oldest first, each with the person and channel of its conversation (main is the operator's)."
    )
  )

const sessions = Command.make("sessions").pipe(
  Command.withDescription("The agent's conversations (.kern/sessions/*.jsonl)."),
  Command.withSubcommands([sessionsList])
)

const dateOption = (name: string, description: string) =>
  Options.text(name).pipe(Options.withDescription(description), Options.optional)

const recallSearch = Command.make("search", {
  query: Args.text({ name: "query" }).pipe(Args.withDescription("what to look for, in plain words")),
  dir: dirArg,
  dirFlag: dirOption,
  limit: Options.integer("limit").pipe(Options.withDescription("hits to return (default 5, at most 50)"), Options.optional),
  after: dateOption("after", "only what happened on or after this date (YYYY-MM-DD)"),
  before: dateOption("before", "only what happened on or before this date (YYYY-MM-DD)"),
  json: jsonOption
}, (args) => Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./recall.js"), (m) => m.search(resolved)))).pipe(
  Command.withDescription("Search past conversations and knowledge/notes files by meaning and keywords (works while the agent runs).")
)

const recallStats = Command.make("stats", { dir: dirArg, dirFlag: dirOption, json: jsonOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./recall.js"), (m) => m.stats(resolved)))).pipe(
    Command.withDescription("What the recall index holds, its embedding model and dimension, whether a backfill runs.")
  )

const recallReindex = Command.make("reindex", { dir: dirArg, dirFlag: dirOption, wait: waitOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./recall.js"), (m) => m.reindex(resolved)))).pipe(
    Command.withDescription("Rebuild the recall index from the session files and knowledge/notes (progress on stderr).")
  )

/** `12-20` (inclusive) or `12`: the message range a recall hit names. */
const messageRange = Args.text({ name: "messages" }).pipe(
  Args.mapEffect((text) => {
    const match = /^(\d+)(?:-(\d+))?$/.exec(text.trim())
    const start = match === null ? Number.NaN : Number(match[1])
    const end = match?.[2] === undefined ? start : Number(match[2])
    return Number.isSafeInteger(start) && Number.isSafeInteger(end) && end >= start
      ? Effect.succeed({ start, end })
      : Effect.fail(HelpDoc.p(`"${text}" is not a message range: write it as a hit names it, e.g. 12-20, or one message, e.g. 12`))
  }),
  Args.withDescription("the messages, as a hit names them: 12-20 (both included), or one message: 12")
)

const recallShow = Command.make("show", {
  session: Args.text({ name: "session" }).pipe(Args.withDescription("the session a hit names")),
  messages: messageRange,
  dir: dirArg,
  dirFlag: dirOption,
  json: jsonOption
}, (args) => Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./recall.js"), (m) => m.show(resolved)))).pipe(
  Command.withDescription(
    "Print in full the messages a search hit names (kern recall search prints this command under every hit it cuts " +
      "short); works while the agent runs."
  )
)

const recall = Command.make("recall").pipe(
  Command.withDescription("The index of every past conversation: search it, read what a hit names, see its state, rebuild it."),
  Command.withSubcommands([recallSearch, recallShow, recallStats, recallReindex])
)

const sessionOption = Options.text("session").pipe(
  Options.withDescription("the session (default: the newest, which the agent writes to)"),
  Options.optional
)

const contextShow = Command.make("show", { dir: dirArg, dirFlag: dirOption, session: sessionOption, json: jsonOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./context.js"), (m) => m.show(resolved)))).pipe(
    Command.withDescription(
      "The next request, as the next turn would build it before its own message: the system prompt by section with " +
        "token counts, the tool definitions' tokens (builtin and MCP apart, and what offering MCP tools by name over " +
        "mcpToolBudget saved), the budget, the raw window and where it is cut, and the summaries standing for the " +
        "messages before it (works while the agent runs)."
    )
  )

const context = Command.make("context").pipe(
  Command.withDescription("The context window: what the model is sent each turn."),
  Command.withSubcommands([contextShow])
)

const segmentsList = Command.make("list", { dir: dirArg, dirFlag: dirOption, session: sessionOption, json: jsonOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./context.js"), (m) => m.list(resolved)))).pipe(
    Command.withDescription(
      "The segment tree of a session: each segment's level, messages, time, tokens and summary size, and whether its " +
        "summary is in the context now (works while the agent runs)."
    )
  )

const segmentsRebuild = Command.make("rebuild", { dir: dirArg, dirFlag: dirOption, session: sessionOption, wait: waitOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./context.js"), (m) => m.rebuild(resolved)))).pipe(
    Command.withDescription(
      "Forget a session's segments and summaries and make them again from its file with the summary model (progress " +
        "on stderr; holds the folder, so stop a running agent first)."
    )
  )

const segments = Command.make("segments").pipe(
  Command.withDescription("The segments and summaries that stand for older messages in the context."),
  Command.withSubcommands([segmentsList, segmentsRebuild])
)

const run = Command.make("run", {
  dir: dirArg,
  dirFlag: dirOption,
  wait: waitOption,
  background: Options.boolean("background").pipe(
    Options.withDescription("no terminal channel: serve the HTTP API until stopped (what kern start runs)")
  )
}, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./run.js"), (m) => m.run(resolved)))).pipe(
    Command.withDescription(
      "Run the agent in the foreground with its HTTP API and web UI: the TUI on a terminal, headless otherwise (stdin lines are messages). Ctrl-C stops it cleanly. " +
        "Spans, metrics and logs go to an OpenTelemetry collector when OTEL_EXPORTER_OTLP_ENDPOINT or config otel names one."
    )
  )

const tui = Command.make("tui", { dir: dirArg, dirFlag: dirOption, wait: waitOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./run.js"), (m) => m.tui(resolved)))).pipe(
    Command.withDescription("Chat with the agent in the terminal: streamed replies, a line per tool call, /status /new /help.")
  )

const start = Command.make("start", { dir: dirArg, dirFlag: dirOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./daemon.js"), (m) => m.start(resolved)))).pipe(
    Command.withDescription(
      "Run the agent in the background (pid in .kern/agent.pid, log in .kern/logs/kern.log); waits until its HTTP API answers. " +
        "Spans, metrics and logs go to an OpenTelemetry collector when OTEL_EXPORTER_OTLP_ENDPOINT or config otel names one."
    )
  )

const serve = Command.make("serve", {
  dirs: folderText.pipe(Args.withDescription("agent folders to host, each named by its folder's name"), Args.repeated),
  config: Options.file("config").pipe(
    Options.withDescription("host.json: { \"agents\": { \"<name>\": \"<folder>\" | { \"dir\": \"<folder>\" } }, \"host\"?, \"port\"?, \"idleSeconds\"? } (watched: agents added or removed there take effect at once)"),
    Options.optional
  ),
  host: Options.text("host").pipe(Options.withDescription("the address to listen on (default 127.0.0.1)"), Options.optional),
  port: Options.integer("port").pipe(Options.withDescription("the port (default 4000; 0 takes a free one)"), Options.optional),
  idleSeconds: Options.integer("idle-seconds").pipe(
    Options.withDescription("passivate an agent after this many seconds with nothing to do (default 600; 0 never)"),
    Options.optional
  ),
  home: Options.directory("home").pipe(
    Options.withDescription("where the host keeps .kern-host/ (its token and lock); default host.json's folder, or the current one"),
    Options.optional
  )
}, (args) => lazy(() => import("./serve.js"), (m) => m.serve(args))).pipe(
  Command.withDescription(
    "Run many agent folders in one process, each under /agents/<name>/ of one HTTP server (its API and web UI, with its own token). " +
      "An agent is started when a request needs it and stopped again after idleSeconds with nothing to do. " +
      "GET /agents and GET /host (with KERN_HOST_TOKEN from .kern-host/.env) list the agents and the host (kern status --host); the host page at / " +
      "(log in with that token) lists them live and opens each one's web UI. " +
      "Its log is .kern-host/logs/kern.log, each agent's lines annotated with its name (kern logs --host, kern logs DIR). Ctrl-C stops every agent cleanly."
  )
)

const stop = Command.make("stop", { dir: dirArg, dirFlag: dirOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./daemon.js"), (m) => m.stop(resolved)))).pipe(
    Command.withDescription(
      "Stop the background agent: SIGTERM, then SIGKILL if it has not exited after 20 s. An agent kern serve hosts is left to its host (exit 1, saying so)."
    )
  )

const restart = Command.make("restart", { dir: dirArg, dirFlag: dirOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./daemon.js"), (m) => m.restart(resolved)))).pipe(
    Command.withDescription("Stop the background agent if it runs, then start it.")
  )

const logs = Command.make("logs", {
  dir: dirArg,
  dirFlag: dirOption,
  follow: Options.boolean("follow").pipe(Options.withAlias("f"), Options.withDescription("keep printing new lines as they come")),
  lines: Options.integer("lines").pipe(
    Options.withAlias("n"),
    Options.withDescription("how many of the last lines to print (default 50)"),
    Options.withDefault(50),
    Options.mapEffect((n) =>
      n < 0 ? Effect.fail(ValidationError.invalidValue(HelpDoc.p(`-n must be 0 or more lines, not ${n}`))) : Effect.succeed(n)
    )
  ),
  level: Options.choice("level", ["debug", "info", "warn", "error"]).pipe(
    Options.withDescription("only lines at this level or above (default info; debug adds each tool call and model step)"),
    Options.optional
  ),
  json: Options.boolean("json").pipe(
    Options.withDescription("one JSON object per line: time, level, message, annotations (agent, turn, session, channel, user, tool…), spans")
  ),
  host: hostFlag("the host's log (.kern-host/logs/kern.log), every agent's lines with agent=<name>")
}, (args) => Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./daemon.js"), (m) => m.logs(resolved)))).pipe(
  Command.withDescription(
    "The background agent's log (.kern/logs/kern.log): turns, tool calls, approvals, provider retries, summaries and channels, with where each happened. " +
      "For an agent kern serve hosts, its lines of the host's log."
  )
)

const open = Command.make("open", { dir: dirArg, dirFlag: dirOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./daemon.js"), (m) => m.open(resolved)))).pipe(
    Command.withDescription("Print a one-time login URL for the web UI (valid 60 s) and open it on a desktop.")
  )

/** An argument whose shape is checked as the command line is read: a mistake there is a usage error (exit 2). */
const shapedText = (name: string, problem: (value: string) => string | undefined) =>
  Args.text({ name }).pipe(Args.mapEffect((value) => {
    const wrong = problem(value)
    return wrong === undefined ? Effect.succeed(value) : Effect.fail(HelpDoc.p(wrong))
  }))

const pair = Command.make("pair", {
  code: shapedText("code", pairingCodeProblem).pipe(Args.withDescription("the code the user was given, e.g. KERN-7QX4")),
  dir: dirArg,
  dirFlag: dirOption
}, (args) => Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./users.js"), (m) => m.pair(resolved)))).pipe(
  Command.withDescription("Approve a channel user's pairing code (works while the agent runs); USERS.md follows.")
)

const approvalIdArg = Args.text({ name: "id" }).pipe(
  Args.withDescription("the approval's id (apr_…), as the TUI, the web UI, the chat or GET /approvals shows it")
)

const approve = Command.make("approve", { id: approvalIdArg, dir: dirArg, dirFlag: dirOption, json: jsonOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./approvals.js"), (m) => m.approve(resolved)))).pipe(
    Command.withDescription("Approve a destructive tool call the running agent waits on (approvalMode ask); it runs.")
  )

const deny = Command.make("deny", { id: approvalIdArg, dir: dirArg, dirFlag: dirOption, json: jsonOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./approvals.js"), (m) => m.deny(resolved)))).pipe(
    Command.withDescription("Refuse a destructive tool call the running agent waits on; the model is told it was denied.")
  )

const approvals = Command.make("approvals", { dir: dirArg, dirFlag: dirOption, json: jsonOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./approvals.js"), (m) => m.list(resolved)))).pipe(
    Command.withDescription("The tool calls the running agent waits on: id, tool, arguments, who asked, when each is denied.")
  )

const userIdArg = shapedText("id", userIdProblem).pipe(Args.withDescription("the user, as <channel>:<id> (see kern users), e.g. telegram:42"))

const usersPromote = Command.make("promote", { id: userIdArg, dir: dirArg, dirFlag: dirOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./users.js"), (m) => m.promote(resolved)))).pipe(
    Command.withDescription("Make an approved channel user an operator (they get the config's toolScope).")
  )

const toolScopes = ["read", "write", "full"] as const

/**
 * `[scope] [dir]`: one word alone is the scope when it names one and the folder otherwise (with --memory); a scope,
 * --memory or both must be given.
 */
const scopeOrDir = <
  T extends { readonly scope: Option.Option<string>; readonly memory: Option.Option<string>; readonly dir: Option.Option<string> }
>(args: T) => {
  const isScope = (word: string): word is typeof toolScopes[number] => (toolScopes as ReadonlyArray<string>).includes(word)
  const word = args.scope
  const parsed = Option.isNone(word) || isScope(word.value)
    ? { ...args, scope: Option.filter(word, isScope) }
    : Option.isNone(args.dir)
    ? { ...args, scope: Option.none<typeof toolScopes[number]>(), dir: word }
    : undefined
  if (parsed === undefined) return Effect.fail(new UsageError({ message: `"${Option.getOrElse(word, () => "")}" is not a tool scope: read, write, full` }))
  if (Option.isNone(parsed.scope) && Option.isNone(args.memory)) {
    return Effect.fail(new UsageError({
      message: "give a tool scope (read, write or full), --memory shared|all, or both, e.g. kern users scope telegram:42 --memory all"
    }))
  }
  return Effect.succeed(parsed)
}

const usersScope = Command.make("scope", {
  id: userIdArg,
  // A word, not a choice: with --memory the scope may be left out, and the parser would take a folder for it.
  scope: Args.text({ name: "read|write|full" }).pipe(
    Args.withDescription("the tool scope: read, write or full (never more than the config's toolScope)"),
    Args.optional
  ),
  memory: Options.choice("memory", ["shared", "all"] as const).pipe(
    Options.withDescription(
      "how far the user's file tools reach in their own conversations: shared (the agent folder's shared/ only, the " +
        "default) or all (the whole folder: notes, KNOWLEDGE.md, USERS.md; never .kern/)"
    ),
    Options.optional
  ),
  dir: dirArg,
  dirFlag: dirOption
}, (args) =>
  Effect.flatMap(scopeOrDir(args), (parsed) =>
    Effect.flatMap(withDir(parsed), (resolved) => lazy(() => import("./users.js"), (m) => m.scope(resolved))))).pipe(
  Command.withDescription(
    "Set an approved user's tool scope (users have read unless set) and/or, with --memory, how far their file tools " +
      "reach (shared/ unless set to all)."
  )
)

const mcpServerArg = Args.text({ name: "server" }).pipe(Args.withDescription("the server's name in mcpServers"))

const mcpList = Command.make("list", { dir: dirArg, dirFlag: dirOption, json: jsonOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./mcp.js"), (m) => m.list(resolved)))).pipe(
    Command.withDescription("The agent's MCP servers: transport and state (connected with its tools, failed and why).")
  )

const mcpTools = Command.make("tools", { server: mcpServerArg, dir: dirArg, dirFlag: dirOption, json: jsonOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./mcp.js"), (m) => m.tools(resolved)))).pipe(
    Command.withDescription("A server's tools: the kernel tool each one is, its safety class and description.")
  )

const mcpCall = Command.make("call", {
  server: mcpServerArg,
  tool: Args.text({ name: "tool" }).pipe(Args.withDescription("the tool's name as the server lists it")),
  args: Options.text("args").pipe(Options.withDescription("the tool's arguments as a JSON object"), Options.withDefault("{}")),
  dir: dirArg,
  dirFlag: dirOption,
  json: Options.boolean("json").pipe(Options.withDescription("print the whole ToolResult as JSON"))
}, (args) => Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./mcp.js"), (m) => m.call(resolved)))).pipe(
  Command.withDescription("Call one MCP tool through the kernel as the operator (policy, budget, audit all apply).")
)

const mcpPrompts = Command.make("prompts", {
  server: Args.text({ name: "server" }).pipe(Args.withDescription("only this server (default: every enabled server)"), Args.optional),
  dir: dirArg,
  dirFlag: dirOption,
  json: jsonOption
}, (args) => Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./mcp.js"), (m) => m.prompts(resolved)))).pipe(
  Command.withDescription("The prompts MCP servers offer: each one's name, description and arguments (required marked *).")
)

const usersRevoke = Command.make("revoke", { id: userIdArg, dir: dirArg, dirFlag: dirOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./users.js"), (m) => m.revoke(resolved)))).pipe(
    Command.withDescription("Forget a user or a pending code: their messages no longer reach the agent.")
  )

const jobs = Command.make("jobs", { dir: dirArg, dirFlag: dirOption, json: jsonOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./jobs.js"), (m) => m.list(resolved)))).pipe(
    Command.withDescription(
      "Background jobs (bash with background: true), newest first: id, state, how long, when, conversation, command. " +
        "Reads kern.db: works with or without a running agent."
    )
  )

const gc = Command.make("gc", {
  dir: dirArg,
  dirFlag: dirOption,
  dryRun: Options.boolean("dry-run").pipe(Options.withDescription("say what would be freed and change nothing")),
  json: jsonOption
}, (args) => Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./gc.js"), (m) => m.gc(resolved)))).pipe(
  Command.withDescription(
    "Apply retention now (config retention: artifacts, the event log, count records; never sessions or memory) and " +
      "say what it freed per kind. With or without a running agent; kern.db is vacuumed only while no agent runs."
  )
)

const users = Command.make("users", { dir: dirArg, dirFlag: dirOption, json: jsonOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./users.js"), (m) => m.list(resolved)))).pipe(
    Command.withDescription("Channel users: approved (role, tool scope) and pending (code); promote, scope, revoke."),
    Command.withSubcommands([usersPromote, usersScope, usersRevoke])
  )

const misfires = ["skip", "once", "all"] as const

const scheduleAdd = Command.make("add", {
  prompt: Args.text({ name: "prompt" }).pipe(Args.withDescription("what the agent is to do when it fires (quote it)")),
  dir: dirArg,
  dirFlag: dirOption,
  at: Options.text("at").pipe(
    Options.withDescription("a one-shot: an ISO time (2026-12-01T09:00) or \"in 3 days at 09:00\", \"tomorrow at 8:30\", \"in 2 hours\""),
    Options.optional
  ),
  cron: Options.text("cron").pipe(Options.withDescription("recurring: a cron expression, e.g. \"0 8 * * 1-5\""), Options.optional),
  timezone: Options.text("timezone").pipe(Options.withDescription("an IANA zone (default: the agent's timezone, else UTC)"), Options.optional),
  deliverTo: Options.text("deliver-to").pipe(
    Options.withDescription("a paired user (telegram:42) whose chat each firing's reply goes to"),
    Options.optional
  ),
  misfire: Options.choice("misfire", misfires).pipe(
    Options.withDescription("runs missed while the agent was down: skip (default for --cron), once (default for --at), all"),
    Options.optional
  ),
  graceMinutes: Options.integer("grace-minutes").pipe(
    Options.withDescription("with --misfire all: how late a missed run may still run (default 1440)"),
    Options.optional
  ),
  json: jsonOption
}, (args) => Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./schedule.js"), (m) => m.add(resolved)))).pipe(
  Command.withDescription(
    "Add a schedule: at its time (--at) or on a cron (--cron) the prompt comes to the agent as a message in the " +
      "operator's conversation. Works with or without a running agent (kern.db is the truth; a running one sees it within 10 s)."
  )
)

const scheduleList = Command.make("list", { dir: dirArg, dirFlag: dirOption, json: jsonOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./schedule.js"), (m) => m.list(resolved)))).pipe(
    Command.withDescription(
      "The heartbeat (id 0) and every schedule: when, its zone, when it next fires, its runs fired and missed (while the agent was down)."
    )
  )

const scheduleRm = Command.make("rm", {
  id: Args.integer({ name: "id" }).pipe(Args.withDescription("the schedule's id (kern schedule list)")),
  dir: dirArg,
  dirFlag: dirOption
}, (args) => Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./schedule.js"), (m) => m.remove(resolved)))).pipe(
  Command.withDescription("Remove a schedule: it never fires again. Not the heartbeat (id 0): set heartbeatInterval: 0 to turn it off.")
)

const schedule = Command.make("schedule").pipe(
  Command.withDescription("Schedules: prompts the agent acts on at a time or on a cron, each firing a turn."),
  Command.withSubcommands([scheduleAdd, scheduleList, scheduleRm])
)

const mcpServe = Command.make("serve", {
  dir: dirArg,
  dirFlag: dirOption,
  allowSend: Options.boolean("allow-send").pipe(
    Options.withDescription("also offer send_message: a message to the running agent, answered in the peer's own conversation")
  ),
  peer: Options.text("peer").pipe(
    Options.withDescription("the other agent's name; its messages form the conversation mcp-<peer> (default: peer)"),
    Options.withDefault("peer"),
    Options.mapEffect((peer) =>
      /^[A-Za-z0-9][A-Za-z0-9-]{0,39}$/.test(peer)
        ? Effect.succeed(peer)
        : Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--peer must be 1 to 40 letters, digits or dashes, not ${JSON.stringify(peer)}`)))
    )
  ),
  wait: waitSeconds("seconds send_message waits for a running agent that does not answer yet (default 10)", 10)
}, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./mcpServe.js"), (m) => m.serve(resolved)))).pipe(
    Command.withDescription(
      "Serve the agent's memory to other agents over MCP on stdin/stdout: recall_search, recall_load and read_memory " +
        "(knowledge/ and notes/), read-only and beside a running agent; with --allow-send also send_message. It serves " +
        "what the operator sees: every conversation's recall. Ends when the client closes stdin."
    )
  )

const skillsList = Command.make("list", { dir: dirArg, dirFlag: dirOption, json: jsonOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./skills.js"), (m) => m.list(resolved)))).pipe(
    Command.withDescription(
      "The agent's skills (skills/<name>/SKILL.md, then the skillsPaths folders): name, description and folder; a " +
        "skill shadowed by one of the same name, and an invalid one with what is wrong."
    )
  )

const skillsShow = Command.make("show", {
  name: Args.text({ name: "name" }).pipe(Args.withDescription("the skill's name")),
  dir: dirArg,
  dirFlag: dirOption,
  json: jsonOption
}, (args) => Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./skills.js"), (m) => m.show(resolved)))).pipe(
  Command.withDescription("A skill's instructions and the files beside them, as read_skill gives them to the model.")
)

const skills = Command.make("skills").pipe(
  Command.withDescription("Skills: instructions for particular tasks the agent loads when it needs them (SKILL.md folders)."),
  Command.withSubcommands([skillsList, skillsShow])
)

const mcp = Command.make("mcp").pipe(
  Command.withDescription(
    "The Model Context Protocol both ways: MCP servers' tools under the kernel (list servers, their tools, call one, their prompts), " +
      "and the agent's memory served to other agents."
  ),
  Command.withSubcommands([mcpList, mcpTools, mcpCall, mcpPrompts, mcpServe])
)

const backupVerify = Command.make("verify", {
  file: Args.text({ name: "file" }).pipe(Args.withDescription("the archive kern backup wrote")),
  json: jsonOption
}, (args) => lazy(() => import("./backup.js"), (m) => m.verify(args))).pipe(
  Command.withDescription(
    "Check a backup: every entry against the manifest's size and sha256, the memory bundle with git bundle verify, " +
      "and kern.db with SQLite's integrity check (on copies in a temporary folder). Exit 1 with what is wrong."
  )
)

const backup = Command.make("backup", {
  dir: dirArg,
  dirFlag: dirOption,
  // Optional to the parser, so that `kern backup verify FILE` parses; the handler asks for it.
  output: Options.text("output").pipe(Options.withAlias("o"), Options.withDescription("the archive to write (a .tar.gz); required"), Options.optional),
  includeSecrets: Options.boolean("include-secrets").pipe(
    Options.withDescription("also archive .kern/.env (provider keys, bot tokens)")
  ),
  force: Options.boolean("force").pipe(Options.withDescription("replace the output file if it exists")),
  json: jsonOption
}, (args) => Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./backup.js"), (m) => m.backup(resolved)))).pipe(
  Command.withDescription(
    "Write the agent into one archive (tar.gz, 0600): a manifest with each entry's size and sha256, a git bundle of the " +
      "memory repository, an online copy of kern.db (works while the agent runs), the sessions, artifacts and config; " +
      ".kern/.env only with --include-secrets. Logs, locks and the session counts are left out. Progress on stderr; " +
      "the output appears only when complete, and an existing one is replaced only with --force."
  ),
  Command.withSubcommands([backupVerify])
)

const restore = Command.make("restore", {
  file: Args.text({ name: "file" }).pipe(Args.withDescription("the archive kern backup wrote")),
  dir: folderText.pipe(Args.withDescription("the new agent folder (same as --dir)"), Args.optional),
  dirFlag: Options.text("dir").pipe(Options.withDescription("the new agent folder: must not exist, or be empty"), Options.optional),
  json: jsonOption
}, (args) => lazy(() => import("./backup.js"), (m) => m.restore(args))).pipe(
  Command.withDescription(
    "Make a working agent folder from a backup: the memory repository with its history, kern.db, sessions, artifacts " +
      "and config. Refuses a folder that is not empty; every entry is checked before it is written and nothing is " +
      "written outside the new folder (a path out of it, a link, a device or a manifest that lies is refused)."
  )
)

const importCommand = Command.make("import", {
  words: Args.text({ name: "kind|source" }).pipe(
    Args.withDescription("[kern-ai|openclaw|opencode] SOURCE: the source, its kind before it (found from the source when left out)"),
    Args.between(1, 2)
  ),
  dirFlag: Options.text("dir").pipe(Options.withDescription("the agent folder to import into (default: the current folder)"), Options.optional),
  dryRun: Options.boolean("dry-run").pipe(Options.withDescription("say what would be imported; write nothing")),
  wait: waitOption,
  json: jsonOption
}, (args) =>
  Effect.flatMap(resolveDir(Option.none(), args.dirFlag), (dir) =>
    lazy(() => import("./import.js"), (m) => m.run({ dir, words: args.words, dryRun: args.dryRun, wait: args.wait, json: args.json })))).pipe(
    Command.withDescription(
      "Import another agent's conversations and memory: a kern-ai agent folder (its sessions, recall.db and memory " +
        "files), an OpenClaw folder (~/.openclaw or a workspace: memory/ and MEMORY.md, agents/*/sessions/*.jsonl) or an " +
        "opencode export (opencode export <sessionID> > FILE.json, or a folder of them). Each conversation becomes a " +
        "session of its own (conversation import-<kind>-…, seen by the operator and recall, never written to by a " +
        "channel) with its original times; memory files go to notes/ and knowledge/, never over an existing file, " +
        "committed once. Importing again skips what is there. The agent must not be running (the folder is held)."
      )
    )

const doctor = Command.make("doctor", { dir: dirArg, dirFlag: dirOption, json: jsonOption }, (args) =>
  Effect.flatMap(withDir(args), (resolved) => lazy(() => import("./doctor.js"), (m) => m.run(resolved)))).pipe(
    Command.withDescription(
      "Check the agent folder and say what to do about each problem: permissions, the lock, kern.db's integrity and " +
        "migrations, the recall index, the summarizer, chat channel tokens, MCP servers, disk space, the config and the " +
        "memory repository. Changes nothing; safe while the agent runs. Exit 1 on any problem."
    )
  )

const kern = Command.make("kern").pipe(
  Command.withDescription("kern runs one long-lived AI agent per folder."),
  Command.withSubcommands([init, status, run, serve, start, stop, restart, logs, open, chat, tui, sessions, recall, context, segments, pair, users, approvals, approve, deny, jobs, gc, kernel, runtimeGuard, mcp, skills, schedule, backup, restore, importCommand, doctor])
)

export const commands = kern

const doc = <Name extends string, R, E, A>(command: Command.Command<Name, R, E, A>, description: string): CommandDoc => ({
  description,
  usage: () => plainUsage(Command.getUsage(command)),
  help: (config) => Command.getHelp(command, config)
})

/** Every command by its full path ("" for kern itself), for help and for the usage line after a mistake. */
export const commandDocs: Readonly<Record<string, CommandDoc>> = {
  "": doc(kern, "kern runs one long-lived AI agent per folder."),
  init: doc(init, "Create an agent folder."),
  status: doc(status, "An agent's configuration, problems and usage."),
  run: doc(run, "Run the agent in the foreground."),
  serve: doc(serve, "Run many agents in one process."),
  start: doc(start, "Run the agent in the background."),
  stop: doc(stop, "Stop the background agent."),
  restart: doc(restart, "Restart the background agent."),
  logs: doc(logs, "The background agent's log."),
  open: doc(open, "Log a browser in to the web UI."),
  chat: doc(chat, "Send one message and stream the reply."),
  tui: doc(tui, "Chat with the agent in the terminal."),
  sessions: doc(sessions, "The agent's conversations."),
  "sessions list": doc(sessionsList, "The sessions, with each one's person and channel."),
  recall: doc(recall, "Search past conversations; the index's state."),
  "recall search": doc(recallSearch, "Search past conversations and files."),
  "recall show": doc(recallShow, "The messages a search hit names, in full."),
  "recall stats": doc(recallStats, "What the recall index holds."),
  "recall reindex": doc(recallReindex, "Rebuild the recall index."),
  context: doc(context, "The context window the model is sent."),
  "context show": doc(contextShow, "The next turn's context, by section and token."),
  segments: doc(segments, "Segments and summaries of older messages."),
  "segments list": doc(segmentsList, "A session's segment tree."),
  "segments rebuild": doc(segmentsRebuild, "Make a session's segments and summaries again."),
  pair: doc(pair, "Approve a channel user's pairing code."),
  approvals: doc(approvals, "The tool calls waiting for approval."),
  approve: doc(approve, "Approve a waiting tool call."),
  deny: doc(deny, "Refuse a waiting tool call."),
  jobs: doc(jobs, "Background jobs and how they ended."),
  gc: doc(gc, "Prune old artifacts, events and count records now."),
  users: { ...doc(users, "Channel users, their roles and tool scopes."), runsAlone: true },
  "users promote": doc(usersPromote, "Make a user an operator."),
  "users scope": doc(usersScope, "Set a user's tool scope and memory reach."),
  "users revoke": doc(usersRevoke, "Forget a user."),
  kernel: doc(kernel, "Inspect the kernel and run tools through it."),
  "kernel info": doc(kernelInfo, "Tools by safety class, policy, events recorded."),
  "kernel namespaces": doc(kernelNamespaces, "The decision keys of kernel events."),
  "kernel tools": doc(kernelTools, "The registered tools."),
  "kernel exec": doc(kernelExec, "Run one tool through the executor."),
  mcp: doc(mcp, "MCP servers' tools, and the agent's memory served over MCP."),
  "mcp list": doc(mcpList, "Each MCP server and its state."),
  "mcp tools": doc(mcpTools, "A server's tools and their safety classes."),
  "mcp call": doc(mcpCall, "Call one MCP tool through the kernel."),
  "mcp prompts": doc(mcpPrompts, "The prompts MCP servers offer, with their arguments."),
  "runtime-guard": doc(runtimeGuard, "Tool contracts against the approved baseline."),
  "runtime-guard tools": doc(guardTools, "Each contract and whether it matches."),
  "runtime-guard snapshot": doc(guardSnapshot, "Approve every current contract."),
  "runtime-guard mismatches": doc(guardMismatches, "What changed, is new or went missing."),
  "runtime-guard approve-contract": doc(guardApprove, "Approve one tool's contract."),
  "mcp serve": doc(mcpServe, "Serve the agent's memory to other agents over MCP (stdio)."),
  skills: doc(skills, "Skills the agent loads when a task needs them."),
  "skills list": doc(skillsList, "Each skill, its folder, and what is wrong with a bad one."),
  "skills show": doc(skillsShow, "A skill's instructions and files."),
  schedule: doc(schedule, "Prompts the agent acts on at a time or on a cron."),
  "schedule add": doc(scheduleAdd, "Add a one-shot (--at) or recurring (--cron) schedule."),
  "schedule list": doc(scheduleList, "Each schedule, its next run, runs fired and missed."),
  "schedule rm": doc(scheduleRm, "Remove a schedule."),
  backup: { ...doc(backup, "Write the agent into one archive."), runsAlone: true },
  "backup verify": doc(backupVerify, "Check a backup's entries, bundle and database."),
  restore: doc(restore, "Make a new agent folder from a backup."),
  import: doc(importCommand, "Import conversations and memory from kern-ai, OpenClaw or opencode."),
  doctor: doc(doctor, "Check the folder; what to do about each problem.")
}

export type InitArgs = Command.Command.ParseConfig<{
  dir: typeof initDirArg
  dirFlag: typeof dirOption
  name: Options.Options<Option.Option<string>>
  provider: Options.Options<Option.Option<Provider>>
  model: Options.Options<Option.Option<string>>
  baseUrl: Options.Options<Option.Option<string>>
  apiKeyEnv: Options.Options<Option.Option<string>>
  embeddingModel: Options.Options<Option.Option<string>>
  contractEnforcement: Options.Options<Option.Option<(typeof contractEnforcements)[number]>>
  noGit: Options.Options<boolean>
  force: Options.Options<boolean>
  json: typeof jsonOption
}>

export type StatusArgs = Command.Command.ParseConfig<{
  dir: typeof dirArg
  dirFlag: typeof dirOption
  json: typeof jsonOption
  host: ReturnType<typeof hostFlag>
}>
