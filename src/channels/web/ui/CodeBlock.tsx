import { useEffect, useRef, useState } from "preact/hooks"

/** How long "Copied" shows before the button says "Copy" again. */
const copiedMillis = 2000

/**
 * Puts `text` on the clipboard: the Clipboard API where the page may use it (a secure context: https, or a loopback
 * address), else the selected text of `fallback` with the older copy command (a page served on a LAN address).
 */
const copyText = async (text: string, fallback: HTMLElement | null): Promise<boolean> => {
  if (window.isSecureContext && navigator.clipboard !== undefined) {
    try {
      await navigator.clipboard.writeText(text)
      return true
    } catch {
      // Refused (no permission, the page not focused): the selection below may still work.
    }
  }
  const selection = window.getSelection()
  if (fallback === null || selection === null) return false
  const range = document.createRange()
  range.selectNodeContents(fallback)
  selection.removeAllRanges()
  selection.addRange(range)
  const copied = document.execCommand("copy")
  selection.removeAllRanges()
  return copied
}

/** A code block of a reply: its language as a label, a button that copies the code's text, the code as text. */
export const CodeBlock = ({ lang, text }: { readonly lang: string; readonly text: string }) => {
  const [copied, setCopied] = useState<boolean | undefined>(undefined)
  const code = useRef<HTMLElement>(null)
  useEffect(() => {
    if (copied === undefined) return
    const timer = setTimeout(() => setCopied(undefined), copiedMillis)
    return () => clearTimeout(timer)
  }, [copied])
  return (
    <figure class="code-block">
      <figcaption class="code-head">
        <span class="code-lang">{lang === "" ? "code" : lang}</span>
        <button
          type="button"
          class="code-copy"
          aria-label={lang === "" ? "Copy code" : `Copy ${lang} code`}
          onClick={() => void copyText(text, code.current).then(setCopied)}
        >
          {copied === undefined ? "Copy" : copied ? "Copied" : "Copy failed"}
        </button>
      </figcaption>
      <pre><code ref={code} class={lang === "" ? undefined : `language-${lang}`}>{text}</code></pre>
    </figure>
  )
}
