import { Effect } from "effect"
import type { SpendCap } from "../config/limits.js"
import { spendUserKey } from "../model/SpendAttribution.js"
import type { SpendGuardShape } from "../model/SpendGuard.js"
import { againstCap, spendLines, type SpendTotals } from "../model/spendStatus.js"
import type { PairingStore } from "../users/PairingStore.js"
import { isChatOperator } from "./chatOperator.js"

/** `/usage` as a chat user types it: alone, or addressed to a bot in a group (`/usage@kern_bot`). */
export const isUsageCommand = (text: string): boolean => /^\/usage(@[A-Za-z0-9_]+)?$/i.test(text.trim())

const reachedOf = (spent: SpendTotals, cap: SpendCap | undefined): ReadonlyArray<string> =>
  cap === undefined ? [] : [
    ...(cap.usdCents !== undefined && spent.usdCents >= cap.usdCents ? ["usdCents"] : []),
    ...(cap.tokens !== undefined && spent.inputTokens + spent.outputTokens >= cap.tokens ? ["tokens"] : [])
  ]

/**
 * `/usage` from a paired chat user (Telegram, Slack): their own spend today against the caps that apply to them
 * (`limits.perUser`, and `limits.perChannel` for the chat it is typed in), never the agent's total nor anyone
 * else's; a paired operator sees the whole day as `kern status` shows it, in a private chat only (a group would read
 * everyone's figures). It never reaches the model: the text returned is the answer.
 */
export const chatUsage = (
  guard: SpendGuardShape,
  pairings: PairingStore,
  where: { readonly iface: string; readonly channel: string; readonly userId: string; readonly privateChat: boolean }
) =>
  Effect.gen(function*() {
    const { channel, iface, userId } = where
    const operator = yield* isChatOperator(pairings, iface, userId, "/usage")
    if (operator && where.privateChat) {
      const status = yield* guard.today
      return ["Today's spend of the whole agent (you are an operator):", ...spendLines(status)].join("\n")
    }
    const spend = yield* guard.todayOf({ user: spendUserKey(iface, userId), channel: `${iface}:${channel}` })
    const { perChannel, perUser } = spend.limits
    const reached = [
      ...reachedOf(spend.user, perUser).map((measure) => `limits.perUser.${measure}`),
      ...reachedOf(spend.channel, perChannel).map((measure) => `limits.perChannel.${measure}`)
    ]
    return [
      `Your spend today (${spend.day}): ${againstCap(spend.user, perUser)}${perUser === undefined ? " (no cap on you)" : " (your daily cap)"}.`,
      ...(perChannel === undefined ? [] : [`This chat today: ${againstCap(spend.channel, perChannel)} (its daily cap).`]),
      ...(reached.length === 0 ? [] : [`Reached: ${reached.join(", ")}: model calls for you are refused until the day ends.`]),
      ...(operator ? ["The whole agent's spend: /usage in a private chat with me, or kern status."] : [])
    ].join("\n")
  }).pipe(
    // kern.db unreadable: the user is told so, never left unanswered.
    Effect.catchTags({
      SqlError: (error) => Effect.as(Effect.logWarning(`kern: ${where.iface}: /usage: ${error.message}`), "Today's spend could not be read; try again later."),
      ParseError: (error) => Effect.as(Effect.logWarning(`kern: ${where.iface}: /usage: ${error.message}`), "Today's spend could not be read; try again later.")
    }),
    Effect.withSpan("kern.channels.chatUsage")
  )
