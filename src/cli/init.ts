import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import { Console, Effect, Layer, Option } from "effect"
import { ProcessEnv } from "../config/ProcessEnv.js"
import { Git } from "../memory/Git.js"
import { initAgent, type InitReport } from "../memory/initAgent.js"
import type { InitArgs } from "./commands.js"
import { requireDir } from "./dirs.js"
import type { FirstSnapshot } from "./runtimeGuard.js"

/** `kern` as the user can run it: through npx inside a checkout (npm marks its exec), or the installed command. */
const invocationFrom = (env: Readonly<Record<string, string | undefined>>): string =>
  env["npm_command"] === "exec" ? "npx kern" : "kern"

const render = (report: InitReport, kern: string, snapshot: FirstSnapshot | undefined): string => {
  const lines = [`Created agent "${report.name}" in ${report.dir}`]
  if (report.written.length > 0) lines.push(`  wrote: ${report.written.join(", ")}`)
  if (report.kept.length > 0) lines.push(`  kept:  ${report.kept.join(", ")}`)
  lines.push(`  git:   ${report.git.status}${report.git.detail === undefined ? "" : ` (${report.git.detail})`}`)
  if (snapshot !== undefined) {
    lines.push(
      snapshot.baseline === "approved"
        ? `  contracts: approved ${snapshot.contracts} tool contracts as the baseline (contractEnforcement is enforce)`
        : `  contracts: kept the existing baseline of ${snapshot.contracts} contracts; \`kern runtime-guard mismatches\` shows drift`
    )
  }
  lines.push(
    "",
    `Next: \`${kern} status ${report.dir}\` says what is still missing (an API key in .kern/.env, a model); then \`${kern} run ${report.dir}\`.`
  )
  return lines.join("\n")
}

export const run = (args: InitArgs) =>
  Effect.gen(function*() {
    const dir = yield* requireDir(args.dir, args.dirFlag)
    const embedding = Option.getOrUndefined(args.embeddingModel)
    const report = yield* initAgent({
      dir,
      name: Option.getOrUndefined(args.name),
      provider: Option.getOrUndefined(args.provider),
      model: Option.getOrUndefined(args.model),
      baseURL: Option.getOrUndefined(args.baseUrl),
      apiKeyEnv: Option.getOrUndefined(args.apiKeyEnv),
      embeddingModel: embedding === "false" ? false : embedding,
      contractEnforcement: Option.getOrUndefined(args.contractEnforcement),
      git: !args.noGit,
      force: args.force
    })
    for (const warning of report.warnings) yield* Console.error(`kern: warning: ${warning}`)
    // Under enforce, write tools with no approved contract are refused: a fresh agent gets its first baseline now.
    const snapshot = report.contractEnforcement === "enforce"
      ? yield* Effect.flatMap(
        Effect.promise(() => import("./runtimeGuard.js")),
        (guard) => guard.firstSnapshot(dir, "kernel", "kern init")
      )
      : undefined
    yield* Console.log(
      args.json
        ? JSON.stringify(snapshot === undefined ? report : { ...report, contracts: snapshot })
        : render(report, invocationFrom(yield* ProcessEnv), snapshot)
    )
  }).pipe(Effect.provide(Git.Default.pipe(Layer.provide(NodeCommandExecutor.layer))))
