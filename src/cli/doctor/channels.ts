import type { HttpClient } from "@effect/platform"
import { Duration, Effect } from "effect"
import type { LoadedConfig } from "../../config/AgentConfig.js"
import * as SlackApi from "../../channels/slack/SlackApi.js"
import { AuthTest, ConnectionsOpen } from "../../channels/slack/wire.js"
import * as TelegramApi from "../../channels/telegram/api.js"
import { type CheckResult, type Finding, problem, resultOf, warning } from "./Check.js"

/** How long a peer has to answer the doctor: it asks one cheap question of each, all at once. */
export const networkTimeout = Duration.seconds(5)

const unreachable = (peer: string, root: string, detail: string): Finding =>
  warning(`${peer} could not be asked (${detail})`, `check the network and the API address (${root})`)

/** Telegram's getMe with TELEGRAM_BOT_TOKEN: a 401 names the variable to fix. */
const telegram = (env: Readonly<Record<string, string>>, token: string) =>
  Effect.gen(function*() {
    const root = env["TELEGRAM_API_ROOT"]?.trim() || TelegramApi.defaultApiRoot
    const api = yield* TelegramApi.make({ root, token })
    return yield* api.getMe.pipe(
      Effect.timeoutFail({
        duration: networkTimeout,
        onTimeout: () => new TelegramApi.TelegramError({ reason: "network", method: "getMe", description: "", message: `no answer in ${Duration.format(networkTimeout)}` })
      }),
      Effect.map((bot): ReadonlyArray<Finding> | string => `telegram @${bot.username ?? bot.id}`),
      Effect.catchAll((error) =>
        Effect.succeed<ReadonlyArray<Finding>>([
          error.reason === "unauthorized"
            ? problem(
              `Telegram refuses TELEGRAM_BOT_TOKEN (${error.description || "401 Unauthorized"})`,
              "set TELEGRAM_BOT_TOKEN in .kern/.env to the token @BotFather gave the bot (/token in BotFather shows it again)"
            )
            : error.reason === "network" || error.reason === "server"
            ? unreachable("Telegram", root, error.message)
            : problem(`Telegram getMe failed: ${error.message}`, "check TELEGRAM_BOT_TOKEN and TELEGRAM_API_ROOT in .kern/.env")
        ])
      )
    )
  })

/** Slack's auth.test with SLACK_BOT_TOKEN and apps.connections.open with SLACK_APP_TOKEN (a URL handed out, never opened). */
const slack = (env: Readonly<Record<string, string>>, botToken: string, appToken: string) =>
  Effect.gen(function*() {
    const root = env["SLACK_API_URL"] || SlackApi.defaultApiUrl
    const api = yield* SlackApi.make({ apiUrl: root, botToken, appToken })
    const ask = <A, I>(variable: string, method: string, schema: Parameters<typeof api.call<A, I>>[2], token: string) =>
      api.call(method, {}, schema, token).pipe(
        Effect.timeoutFail({
          duration: networkTimeout,
          onTimeout: () => new SlackApi.SlackApiError({ method, error: "network", message: `no answer in ${Duration.format(networkTimeout)}` })
        }),
        Effect.as<ReadonlyArray<Finding>>([]),
        Effect.catchAll((error) =>
          Effect.succeed<ReadonlyArray<Finding>>([
            error.fatal
              ? problem(`Slack refuses ${variable} (${error.error})`, `set ${variable} in .kern/.env to the app's ${variable === "SLACK_APP_TOKEN" ? "app-level token (xapp-…, with connections:write)" : "bot token (xoxb-…)"}`)
              : error.error === "network" || error.error.startsWith("http_5")
              ? unreachable("Slack", root, error.message)
              : problem(`Slack ${method} failed: ${error.message}`, `check ${variable} and SLACK_API_URL in .kern/.env`)
          ])
        )
      )
    const [bot, app] = yield* Effect.all([
      ask("SLACK_BOT_TOKEN", "auth.test", AuthTest, botToken),
      ask("SLACK_APP_TOKEN", "apps.connections.open", ConnectionsOpen, appToken)
    ], { concurrency: 2 })
    return [...bot, ...app].length === 0 ? "slack" : [...bot, ...app]
  })

/**
 * Each chat channel whose token is set, asked whether it takes the token: Telegram and Slack concurrently, each within
 * `networkTimeout`. A refused token is a problem naming its variable; an unreachable peer a warning.
 */
export const channelsCheck = (loaded: LoadedConfig): Effect.Effect<CheckResult, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const { env } = loaded
    const telegramToken = env["TELEGRAM_BOT_TOKEN"]?.trim() ?? ""
    const botToken = env["SLACK_BOT_TOKEN"] ?? ""
    const appToken = env["SLACK_APP_TOKEN"] ?? ""
    const findings: Array<Finding> = []
    if ((botToken === "") !== (appToken === "")) {
      const missing = botToken === "" ? "SLACK_BOT_TOKEN" : "SLACK_APP_TOKEN"
      findings.push(problem(`${missing} is not set: the Slack channel needs both tokens and stays off`, `set ${missing} in .kern/.env`))
    }
    const answers = yield* Effect.all([
      telegramToken === "" ? Effect.succeed(undefined) : telegram(env, telegramToken),
      botToken === "" || appToken === "" ? Effect.succeed(undefined) : slack(env, botToken, appToken)
    ], { concurrency: 2 })
    const working = answers.filter((answer): answer is string => typeof answer === "string")
    for (const answer of answers) if (Array.isArray(answer)) findings.push(...answer)
    const configured = answers.some((answer) => answer !== undefined)
    return resultOf(
      "channels",
      findings,
      configured ? `${working.join(" and ")} ${working.length === 1 ? "takes its token" : "take their tokens"}` : "no chat channel configured"
    )
  })
