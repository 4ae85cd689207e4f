import { useEffect, useState } from "preact/hooks"
import { neutralizeControls } from "../../terminalSafe.js"
import { timeLeft } from "./approvals.js"
import type { Store } from "./store.js"

/**
 * Shows the oldest question a web turn asks (ask_user_question), one at a time: single choice as buttons, multiSelect
 * as checkboxes with a submit, allowText (or no options) as a text field. It closes when the question resolves,
 * here or elsewhere (answered, timed out, turn stopped).
 */
export const QuestionDialog = ({ store }: { readonly store: Store }) => {
  const current = store.questions.value.pending[0]
  const [checked, setChecked] = useState<ReadonlyArray<number>>([])
  const [text, setText] = useState("")
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<{ readonly id: string; readonly text: string } | undefined>(undefined)
  const [now, setNow] = useState(() => Date.now())

  useEffect(() => {
    setChecked([])
    setText("")
    setNow(Date.now())
  }, [current?.id])
  useEffect(() => {
    if (current === undefined) return
    const tick = setInterval(() => setNow(Date.now()), 1000)
    return () => clearInterval(tick)
  }, [current === undefined])

  if (current === undefined) return null

  const send = async (choices: ReadonlyArray<number>) => {
    if (busy) return
    setBusy(true)
    const id = current.id
    const words = text.trim()
    const failed = await store.answerQuestion(id, words === "" ? { choices } : { choices, text: words })
    setBusy(false)
    setError(failed === undefined ? undefined : { id, text: failed })
  }

  const writes = current.allowText || current.options.length === 0
  const submits = current.multiSelect || writes
  const left = timeLeft(current.expiresAt, now)
  return (
    <div class="backdrop approval-backdrop">
      <div class="approval question" role="dialog" aria-modal="true" aria-labelledby="question-title">
        <header class="approval-head">
          <h2 id="question-title" class="question-text">{neutralizeControls(current.question)}</h2>
        </header>
        {left !== undefined && <p class="approval-expiry">Goes on without an answer in {left}</p>}
        <form
          class="question-form"
          onSubmit={(e) => {
            e.preventDefault()
            void send(checked)
          }}
        >
          {current.options.map((option, i) =>
            current.multiSelect
              ? (
                <label class="question-option" key={i}>
                  <input
                    type="checkbox"
                    checked={checked.includes(i)}
                    onChange={() => setChecked(checked.includes(i) ? checked.filter((n) => n !== i) : [...checked, i])}
                  />
                  {neutralizeControls(option)}
                </label>
              )
              : (
                <button type="button" class="question-option" key={i} aria-disabled={busy} onClick={() => void send([i])}>
                  {neutralizeControls(option)}
                </button>
              )
          )}
          {writes && (
            <input
              type="text"
              class="question-answer-text"
              aria-label="Your answer"
              placeholder={current.options.length === 0 ? "Your answer" : "Or your own words"}
              value={text}
              onInput={(e) => setText(e.currentTarget.value)}
            />
          )}
          {error?.id === current.id && <p class="approval-error" role="alert">{error.text}</p>}
          {submits && (
            <div class="approval-actions">
              <button type="submit" class="approve" aria-disabled={busy}>Answer</button>
            </div>
          )}
        </form>
      </div>
    </div>
  )
}
