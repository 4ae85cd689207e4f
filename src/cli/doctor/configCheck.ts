import type { FileSystem } from "@effect/platform"
import { Effect, Either } from "effect"
import { loadConfig, type LoadedConfig } from "../../config/AgentConfig.js"
import { NotAnAgentFolder } from "../../config/errors.js"
import type { ProcessEnv } from "../../config/ProcessEnv.js"
import { providerProblems } from "../../config/providers.js"
import { costCapProblem } from "../../model/pricing.js"
import { type CheckResult, type Finding, problem, resultOf, warning } from "./Check.js"

/** The config check's line, and the config when it loads. */
export interface ConfigOutcome {
  readonly result: CheckResult
  readonly loaded: LoadedConfig | undefined
}

/**
 * The config loader's own verdict (config.json, .env, the KERN_* overrides), with what `kern status` also says keeps
 * the agent from its model. A config that does not load is a problem, and the checks that need it are skipped.
 */
export const configCheck = (dir: string) =>
  Effect.gen(function*(): Effect.fn.Return<ConfigOutcome, NotAnAgentFolder, FileSystem.FileSystem | ProcessEnv> {
    const loaded = yield* Effect.either(loadConfig(dir))
    if (Either.isLeft(loaded)) {
      const error = loaded.left
      return {
        result: resultOf("config", [problem(error.message, `correct ${error.source}${error.key === undefined ? "" : ` (key "${error.key}")`}`)], ""),
        loaded: undefined
      }
    }
    if (!loaded.right.fileExists) return yield* new NotAnAgentFolder({ dir })
    const { config, env, warnings } = loaded.right
    const costCap = costCapProblem(config)
    const findings: Array<Finding> = [
      ...warnings.map((text) => warning(text, "correct or remove it in .kern/config.json (or .kern/.env)")),
      ...providerProblems(config, env).map((text) => problem(text, text.slice(text.indexOf(":") + 1).trim())),
      ...(costCap === undefined ? [] : [warning(costCap, `add the model's price under "prices" in .kern/config.json`)])
    ]
    return {
      result: resultOf("config", findings, `.kern/config.json is valid (provider ${config.provider}${config.model === undefined ? "" : `, model ${config.model}`})`),
      loaded: loaded.right
    }
  })
