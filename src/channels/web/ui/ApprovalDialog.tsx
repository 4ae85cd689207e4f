import { useEffect, useRef, useState } from "preact/hooks"
import { approvalTexts, timeLeft } from "./approvals.js"
import type { Store } from "./store.js"
import type { PendingApproval } from "./wire.js"

const clock = (at: string): string => {
  const date = new Date(at)
  return Number.isNaN(date.getTime()) ? at : date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" })
}

const focusable = "button, [tabindex]:not([tabindex='-1'])"

/**
 * Asks the operator about the oldest call waiting for approval, one at a time. Modal: the page behind waits. Deny has
 * the focus (the safe answer to an Enter pressed in haste), and Escape answers nothing.
 */
export const ApprovalDialog = ({ store }: { readonly store: Store }) => {
  const pending = store.approvals.value.pending
  const current = pending[0]
  const [now, setNow] = useState(() => Date.now())
  const [busy, setBusy] = useState(false)
  // An answer that failed, for the call it was about (the dialog may have moved on meanwhile).
  const [error, setError] = useState<{ readonly id: string; readonly text: string } | undefined>(undefined)
  const dialog = useRef<HTMLDivElement>(null)
  const deny = useRef<HTMLButtonElement>(null)
  const focusBefore = useRef<Element | null>(null)
  const open = current !== undefined

  useEffect(() => {
    if (!open) return
    focusBefore.current = document.activeElement
    const tick = setInterval(() => setNow(Date.now()), 1000)
    return () => {
      clearInterval(tick)
      const before = focusBefore.current
      if (before instanceof HTMLElement && before.isConnected) before.focus()
    }
  }, [open])

  // Each call asked about starts with the focus on Deny.
  useEffect(() => {
    setNow(Date.now())
    deny.current?.focus()
  }, [current?.id])

  if (current === undefined) return null

  const answer = async (approved: boolean) => {
    if (busy) return
    setBusy(true)
    const id = current.id
    const failed = await store.decide(id, approved)
    setBusy(false)
    setError(failed === undefined ? undefined : { id, text: failed })
  }

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      // Closing without an answer would leave the call waiting unseen: the dialog stays until it is answered.
      e.preventDefault()
      deny.current?.focus()
      return
    }
    if (e.key !== "Tab" || dialog.current === null) return
    const stops = Array.from(dialog.current.querySelectorAll<HTMLElement>(focusable))
    const first = stops[0]
    const last = stops[stops.length - 1]
    if (first === undefined || last === undefined) return
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault()
      last.focus()
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault()
      first.focus()
    }
  }

  const left = timeLeft(current.expiresAt, now)
  const shown = approvalTexts(current, store.userNames.value)
  return (
    <div class="backdrop approval-backdrop">
      <div
        class="approval"
        role="alertdialog"
        aria-modal="true"
        aria-labelledby="approval-title"
        aria-describedby="approval-reason"
        ref={dialog}
        onKeyDown={onKeyDown}
      >
        <header class="approval-head">
          <h2 id="approval-title">
            Allow <code class="approval-tool">{shown.toolId}</code>?
          </h2>
          {pending.length > 1 && <span class="approval-count">1 of {pending.length}</span>}
        </header>
        <p id="approval-reason" class="approval-reason">{shown.reason}</p>
        <dl class="approval-facts">
          <div>
            <dt>Asked by</dt>
            <dd class="approval-origin">{shown.origin}</dd>
          </div>
          <div>
            <dt>Denied unless answered</dt>
            <dd class="approval-expiry">
              {left === undefined ? `at ${clock(current.expiresAt)} (now)` : `in ${left} (at ${clock(current.expiresAt)})`}
            </dd>
          </div>
        </dl>
        <h3 class="approval-args-title">Arguments</h3>
        <pre class="approval-args" tabIndex={0} aria-label="Arguments of the call">{shown.args}</pre>
        {error?.id === current.id && <p class="approval-error" role="alert">{error.text}</p>}
        <div class="approval-actions">
          <button type="button" class="deny" ref={deny} aria-disabled={busy} onClick={() => void answer(false)}>Deny</button>
          <button type="button" class="approve" aria-disabled={busy} onClick={() => void answer(true)}>Approve</button>
        </div>
      </div>
    </div>
  )
}
