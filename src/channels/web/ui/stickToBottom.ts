import { type RefObject } from "preact"
import { useEffect, useRef } from "preact/hooks"

/**
 * Whether the log follows new text (the reader is at its bottom), kept across a resize: a narrower window wraps the
 * text taller, and the browser's scroll anchoring then moves the view to keep some line in place, which is not the
 * reader scrolling up. A scroll while the log's size differs from the size last seen is the layout's; when the
 * resize is over (ResizeObserver) the log goes back to its bottom if it was following.
 */
export const useStickToBottom = (scroller: RefObject<HTMLElement>, slack: number) => {
  const follow = useRef(true)
  const size = useRef({ width: -1, height: -1 })

  useEffect(() => {
    const el = scroller.current
    if (el === null) return
    const observer = new ResizeObserver(() => {
      size.current = { width: el.clientWidth, height: el.clientHeight }
      if (follow.current) el.scrollTop = el.scrollHeight
    })
    observer.observe(el)
    return () => observer.disconnect()
  }, [scroller])

  /** For the log's scroll event: what the reader did, not what a resize did. */
  const onScroll = (el: HTMLElement) => {
    if (el.clientWidth !== size.current.width || el.clientHeight !== size.current.height) return
    follow.current = el.scrollHeight - el.scrollTop - el.clientHeight < slack
  }

  return { follow, onScroll }
}
