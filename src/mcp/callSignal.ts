/**
 * The `signal` of one MCP request: what the SDK's request reads of an AbortSignal (Protocol.request in
 * @modelcontextprotocol/sdk 1.x: `throwIfAborted()` before sending, `aborted` when the answer comes, one `abort`
 * listener that sends notifications/cancelled, and `reason`), and nothing more. A call is aborted only when its fiber
 * is interrupted (a stopped turn), yet it made an AbortController every time: an EventTarget and its signal, 4–7 µs
 * of a call that costs kern ~100 µs in all. test/mcp/callLifetime.test.ts checks the SDK still cancels through it.
 */
export class CallSignal {
  aborted = false
  reason: unknown = undefined
  private listeners: Array<() => void> = []

  throwIfAborted(): void {
    if (this.aborted) throw this.reason
  }

  addEventListener(type: string, listener: () => void): void {
    if (type === "abort") this.listeners.push(listener)
  }

  removeEventListener(type: string, listener: () => void): void {
    if (type === "abort") this.listeners = this.listeners.filter((kept) => kept !== listener)
  }

  /** Aborts once, as AbortController.abort does: `reason` an AbortError, each listener called. */
  abort(): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = new DOMException("This operation was aborted", "AbortError")
    for (const listener of this.listeners) listener()
  }

  /** As the SDK's options type it: the members above are all it reads. */
  get signal(): AbortSignal {
    return this as unknown as AbortSignal
  }
}
