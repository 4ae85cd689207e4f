import { useEffect, useRef, useState } from "preact/hooks"
import type { MessageRange } from "./responses.js"
import { ContextTab } from "./ContextTab.js"
import { NotesTab } from "./NotesTab.js"
import { RecallTab } from "./RecallTab.js"
import { SegmentsTab } from "./SegmentsTab.js"
import { SessionsTab } from "./SessionsTab.js"

const tabs = [
  { id: "sessions", label: "Sessions" },
  { id: "segments", label: "Segments" },
  { id: "notes", label: "Notes" },
  { id: "recall", label: "Recall" },
  { id: "context", label: "Context" }
] as const

const focusable = "button:not([disabled]), [href], input, textarea, select, summary, [tabindex]:not([tabindex='-1'])"

/** The Memory overlay: a modal dialog; Esc closes it, Tab stays inside it, arrows move between tabs. */
export const MemoryOverlay = ({ onClose }: { readonly onClose: () => void }) => {
  const [active, setActive] = useState(0)
  // A recall hit opened from the Recall tab: the Sessions tab shows its session around its messages.
  const [target, setTarget] = useState<MessageRange | undefined>(undefined)
  const dialog = useRef<HTMLDivElement>(null)
  const tabRefs = useRef<Array<HTMLButtonElement | null>>([])

  useEffect(() => {
    tabRefs.current[0]?.focus()
  }, [])

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

  const select = (index: number) => {
    const next = (index + tabs.length) % tabs.length
    setActive(next)
    tabRefs.current[next]?.focus()
  }

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

  const openHit = (range: MessageRange) => {
    setTarget(range)
    select(0)
  }

  const id = tabs[active]?.id
  return (
    <div class="backdrop" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div class="overlay" role="dialog" aria-modal="true" aria-labelledby="memory-title" ref={dialog} onKeyDown={onKeyDown}>
        <header class="overlay-head">
          <h2 id="memory-title">Memory</h2>
          <button type="button" class="close" aria-label="Close memory (Esc)" onClick={onClose}>×</button>
        </header>
        <div class="tabs" role="tablist" aria-label="Memory views">
          {tabs.map((tab, i) => (
            <button
              key={tab.id}
              type="button"
              role="tab"
              id={`tab-${tab.id}`}
              aria-selected={i === active}
              aria-controls={`panel-${tab.id}`}
              tabIndex={i === active ? 0 : -1}
              ref={(el) => {
                tabRefs.current[i] = el
              }}
              onClick={() => select(i)}
              onKeyDown={(e) => {
                if (e.key === "ArrowRight") select(i + 1)
                else if (e.key === "ArrowLeft") select(i - 1)
                else if (e.key === "Home") select(0)
                else if (e.key === "End") select(tabs.length - 1)
              }}
            >
              {tab.label}
            </button>
          ))}
        </div>
        <section
          class="panel"
          role="tabpanel"
          id={`panel-${tabs[active]?.id}`}
          aria-labelledby={`tab-${tabs[active]?.id}`}
          tabIndex={0}
        >
          {id === "sessions"
            ? <SessionsTab key={`sessions:${target?.session ?? ""}:${target?.start ?? ""}`} target={target} />
            : id === "recall"
            ? <RecallTab onOpen={openHit} />
            : id === "segments"
            ? <SegmentsTab />
            : id === "notes"
            ? <NotesTab />
            : <ContextTab />}
        </section>
      </div>
    </div>
  )
}
