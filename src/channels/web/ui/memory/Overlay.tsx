import { useEffect, useRef, useState } from "preact/hooks"
import { Modal } from "../Modal.js"
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

/** The Memory overlay: a modal dialog (Modal: Esc closes it, Tab stays inside it); arrows move between tabs. */
export const MemoryOverlay = ({ onClose }: { readonly onClose: () => void }) => {
  const [active, setActive] = useState(0)
  // A recall hit opened from the Recall tab: the Sessions tab shows its session around its messages.
  const [target, setTarget] = useState<MessageRange | undefined>(undefined)
  const tabRefs = useRef<Array<HTMLButtonElement | null>>([])

  useEffect(() => {
    tabRefs.current[0]?.focus()
  }, [])

  const select = (index: number) => {
    const next = (index + tabs.length) % tabs.length
    setActive(next)
    tabRefs.current[next]?.focus()
  }

  const openHit = (range: MessageRange) => {
    setTarget(range)
    select(0)
  }

  const id = tabs[active]?.id
  return (
    <Modal id="memory" title="Memory" onClose={onClose}>
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
    </Modal>
  )
}
