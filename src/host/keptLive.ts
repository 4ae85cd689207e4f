import { Option } from "effect"
import * as SlackChannel from "../channels/slack/SlackChannel.js"

/**
 * The one rule for which hosted agents `kern serve` keeps live (woken at once, never passivated while hosted), read
 * both by the live agent (AgentActivity.keptLive, liveAgent.ts) and by the wake sources while it is passive (its due
 * time is now, and no shared poller watches its bot).
 */

/** Slack's Socket Mode delivers an event only to a connected app: no shared poller can watch it for a passive agent. */
export const slackKeptLive = "Slack (Socket Mode) is configured, and Slack delivers a message only to a connected agent"

/**
 * Among several runners a shared poller on each runner would poll the same bot (each runner's passive agent is live on
 * another), and Telegram ends one of two polls with 409 and gives updates to either: the agent's own channel polls
 * instead, on the one runner the cluster holds it on.
 */
export const telegramKeptLive =
  "Telegram is configured and runners share the agents: its own channel polls its bot on the one runner holding it (Telegram allows one poller per bot)"

/** Whether the folder's environment configures a Telegram bot (TELEGRAM_BOT_TOKEN, as the channel reads it). */
export const telegramConfigured = (env: Readonly<Record<string, string | undefined>>): boolean =>
  (env["TELEGRAM_BOT_TOKEN"]?.trim() ?? "") !== ""

/** Why an agent with this environment is kept live (none: it may be passivated once idle); `clustered`: among runners. */
export const keptLive = (env: Readonly<Record<string, string | undefined>>, clustered: boolean): Option.Option<string> =>
  SlackChannel.configured(env)
    ? Option.some(slackKeptLive)
    : clustered && telegramConfigured(env)
    ? Option.some(telegramKeptLive)
    : Option.none()
