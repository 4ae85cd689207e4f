import { Layer } from "effect"
import * as InboxSql from "../runtime/Inbox.js"
import * as SlackChannel from "./slack/SlackChannel.js"
import * as TelegramChannel from "./telegram/TelegramChannel.js"

/**
 * The chat channels `kern run` and `kern start` start: each one whose tokens are configured (TELEGRAM_BOT_TOKEN;
 * SLACK_BOT_TOKEN and SLACK_APP_TOKEN) runs for the life of the agent, the others stay off. A channel's failure is
 * its own: it is logged and retried, never stops the agent or the other channels.
 */
export const layer = Layer.mergeAll(TelegramChannel.layer, SlackChannel.layer).pipe(Layer.provide(InboxSql.layerSql))
