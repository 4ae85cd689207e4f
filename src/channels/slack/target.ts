/**
 * Where a Slack turn came from and where its reply goes. A DM's `channel` is the conversation id (`D0123`); a mention
 * in a channel is answered in its thread, so its `channel` carries the thread's root ts: `C0123:1700000000.000100`.
 * Messages of one thread share a channel, so the queue injects a follow-up into the running turn.
 */
export interface Target {
  readonly channel: string
  readonly threadTs?: string | undefined
}

export const encodeTarget = (target: Target): string =>
  target.threadTs === undefined ? target.channel : `${target.channel}:${target.threadTs}`

export const decodeTarget = (encoded: string): Target => {
  const at = encoded.indexOf(":")
  return at < 0 ? { channel: encoded } : { channel: encoded.slice(0, at), threadTs: encoded.slice(at + 1) }
}

/** A user id (`U…`, `W…` on Enterprise Grid) rather than a conversation: `send` opens the DM first. */
export const isUserId = (id: string): boolean => /^[UW][A-Z0-9]+$/.test(id)

/** `chat.postMessage` fields for a target. */
export const postFields = (target: Target): Record<string, string> =>
  target.threadTs === undefined ? { channel: target.channel } : { channel: target.channel, thread_ts: target.threadTs }
