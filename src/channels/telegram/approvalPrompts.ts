import { Effect, Ref } from "effect"
import type { ApprovalResolution, ApprovalsShape, PendingApproval } from "../../runtime/Approvals.js"
import { channelUser } from "../../runtime/Approvals.js"
import type { BotApi, CallbackQuery, InlineKeyboard } from "./api.js"
import { editChunk, sendChunk } from "./deliver.js"
import { escapeHtml } from "./markdown.js"
import { telegramInterface } from "./replies.js"

/** How much of the arguments a prompt shows: the whole message must stay under Telegram's 4096 characters. */
export const argsShown = 3000
const reasonShown = 500
const earlyKept = 100

/** The longest prefix of `text` whose escaped form fits in `limit` (an entity is never cut). */
const escapedPrefix = (text: string, limit: number): string => {
  let length = 0
  let end = 0
  for (const char of text) {
    const escaped = escapeHtml(char).length
    if (length + escaped > limit) break
    length += escaped
    end += char.length
  }
  return text.slice(0, end)
}

export const approvalHtml = (pending: PendingApproval): string => {
  const args = JSON.stringify(pending.args, null, 2) ?? "undefined"
  const shown = escapedPrefix(args, argsShown)
  const cut = args.length - shown.length
  const reason = pending.reason.length > reasonShown ? `${pending.reason.slice(0, reasonShown)}…` : pending.reason
  const seconds = Math.round((pending.expiresAtMs - pending.requestedAtMs) / 1000)
  return [
    `🔐 <b>Approval needed</b>: <code>${escapeHtml(pending.toolId)}</code> (${escapeHtml(pending.id)})`,
    escapeHtml(reason),
    `<pre>${escapeHtml(shown)}</pre>` +
    (cut > 0 ? `\n<i>(${cut} more characters not shown: see the full call with kern approve or in the web UI)</i>` : ""),
    `Answer within ${seconds} s, or it is denied.`
  ].join("\n")
}

export const keyboard = (id: string): InlineKeyboard => [[
  { text: "✅ Approve", callback_data: `approve:${id}` },
  { text: "❌ Deny", callback_data: `deny:${id}` }
]]

const outcomeLine = (resolution: ApprovalResolution): string =>
  resolution.outcome === "timeout"
    ? "⌛ <b>Timed out</b>: nobody answered, so it was denied."
    : resolution.outcome === "approved"
    ? `✅ <b>Approved</b> by ${escapeHtml(resolution.by)}`
    : `❌ <b>Denied</b> by ${escapeHtml(resolution.by)}`

const callbackPattern = /^(approve|deny):(apr_[0-9a-f]+)$/

interface Posted {
  readonly chatId: string
  readonly messageId: number
  readonly html: string
}

/**
 * Approvals asked by Telegram turns: posted to the chat the turn came from with Approve / Deny buttons; a press is
 * the presser's decision (only an operator's counts: Approvals checks); once answered, from anywhere, the prompt says
 * by whom and loses its buttons.
 */
export const makeApprovalPrompts = (api: BotApi, approvals: ApprovalsShape) =>
  Effect.gen(function*() {
    const posted = yield* Ref.make(new Map<string, Posted>())
    /** Answers that came before their prompt was posted (someone was quicker at the terminal). */
    const early = yield* Ref.make(new Map<string, ApprovalResolution>())

    const remember = (id: string, entry: Posted) => Ref.update(posted, (all) => new Map(all).set(id, entry))
    const take = <A>(ref: Ref.Ref<Map<string, A>>, id: string) =>
      Ref.modify(ref, (all): [A | undefined, Map<string, A>] => {
        const found = all.get(id)
        if (found === undefined) return [undefined, all]
        const next = new Map(all)
        next.delete(id)
        return [found, next]
      })

    const close = (entry: Posted, resolution: ApprovalResolution) =>
      editChunk(api, entry.chatId, entry.messageId, `${entry.html}\n\n${outcomeLine(resolution)}`, { keyboard: [] })

    const request = (pending: PendingApproval) =>
      Effect.gen(function*() {
        if (pending.origin.interface !== telegramInterface) return
        const chatId = pending.origin.channel
        const html = approvalHtml(pending)
        const messageId = yield* sendChunk(api, chatId, html, { keyboard: keyboard(pending.id) })
        const entry = { chatId, messageId, html }
        const answered = yield* take(early, pending.id)
        if (answered !== undefined) return yield* close(entry, answered)
        yield* remember(pending.id, entry)
      }).pipe(
        Effect.catchAll((error) => Effect.logWarning(`kern: telegram: could not ask for approval ${pending.id}: ${error.message}`)),
        Effect.withSpan("kern.telegram.approval.request")
      )

    const resolved = (resolution: ApprovalResolution) =>
      Effect.gen(function*() {
        const entry = yield* take(posted, resolution.id)
        if (entry === undefined) {
          // Most are answers to other channels' approvals: only the latest few are kept.
          return yield* Ref.update(early, (all) => {
            const next = new Map(all).set(resolution.id, resolution)
            for (const id of next.keys()) {
              if (next.size <= earlyKept) break
              next.delete(id)
            }
            return next
          })
        }
        yield* close(entry, resolution)
      }).pipe(Effect.catchAll((error) => Effect.logWarning(`kern: telegram: could not update approval ${resolution.id}: ${error.message}`)))

    /** A button press: decided as the presser, and answered with the outcome or why it did not count. */
    const pressed = (query: CallbackQuery) =>
      Effect.gen(function*() {
        const match = callbackPattern.exec(query.data ?? "")
        if (match === null) return yield* api.answerCallbackQuery(query.id, "This button is not kern's.", false)
        const approved = match[1] === "approve"
        const answer = yield* approvals.decide(match[2]!, approved, channelUser(telegramInterface, String(query.from.id))).pipe(
          Effect.match({
            onFailure: (error) => ({ text: error.message.slice(0, 200), alert: true }),
            onSuccess: (resolution) => ({ text: resolution.approved ? "Approved" : "Denied", alert: false })
          })
        )
        yield* api.answerCallbackQuery(query.id, answer.text, answer.alert)
      }).pipe(Effect.withSpan("kern.telegram.approval.pressed"))

    return { request, resolved, pressed } as const
  })
