import type { ComponentChildren } from "preact"
import { useEffect, useRef } from "preact/hooks"

const focusable = "button:not([disabled]), [href], input, textarea, select, summary, [tabindex]:not([tabindex='-1'])"

/**
 * A full-height modal dialog over the page (the Memory and Schedules overlays): a click on the backdrop or Esc from
 * anywhere closes it, Tab stays inside it; its head is `title` and a close button.
 */
export const Modal = (
  { id, title, onClose, children }: {
    /** Names the dialog's title element (`<id>-title`). */
    readonly id: string
    readonly title: string
    readonly onClose: () => void
    readonly children: ComponentChildren
  }
) => {
  const dialog = useRef<HTMLDivElement>(null)

  // Esc closes from anywhere: focus may have fallen to the body (a clicked button that went away).
  useEffect(() => {
    const onEscape = (e: KeyboardEvent) => {
      if (e.key === "Escape" && !e.defaultPrevented) {
        e.preventDefault()
        onClose()
      }
    }
    document.addEventListener("keydown", onEscape)
    return () => document.removeEventListener("keydown", onEscape)
  }, [onClose])

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Tab" && dialog.current !== null) {
      const all = Array.from(dialog.current.querySelectorAll<HTMLElement>(focusable))
      const first = all[0]
      const last = all[all.length - 1]
      if (e.shiftKey && document.activeElement === first) {
        e.preventDefault()
        last?.focus()
      } else if (!e.shiftKey && document.activeElement === last) {
        e.preventDefault()
        first?.focus()
      }
    }
  }

  return (
    <div class="backdrop" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div class="overlay" role="dialog" aria-modal="true" aria-labelledby={`${id}-title`} ref={dialog} onKeyDown={onKeyDown}>
        <header class="overlay-head">
          <h2 id={`${id}-title`}>{title}</h2>
          <button type="button" class="close" aria-label={`Close ${title.toLowerCase()} (Esc)`} onClick={onClose}>×</button>
        </header>
        {children}
      </div>
    </div>
  )
}
