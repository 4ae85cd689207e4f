import { useLayoutEffect, useRef, useState } from "preact/hooks"
import { FileList, PickedFiles } from "./FileChips.js"
import { refusal } from "./attachments.js"
import { pick, type PickedFile } from "./fileUpload.js"
import type { Item, Part } from "./chatState.js"
import { Markdown } from "./Markdown.js"
import type { Store } from "./store.js"
import { useStickToBottom } from "./stickToBottom.js"
import { ToolBlock } from "./ToolBlock.js"
import { senderLabel, type UserNames } from "./userNames.js"

/** Within this many pixels of the bottom the log follows new text; further up, the reader is reading. */
const followSlack = 80

const time = (at: string): string => {
  const date = new Date(at)
  return Number.isNaN(date.getTime()) ? "" : date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
}

const PartView = ({ part }: { readonly part: Part }) => {
  switch (part.kind) {
    case "text":
      return <Markdown text={part.text} />
    case "tool":
      return (
        <>
          <ToolBlock part={part} />
          {part.result?.file !== undefined && <FileList files={[part.result.file]} />}
        </>
      )
    case "recall":
      return (
        <div class="recall-block" role="note">
          <strong>Recalled</strong> {part.hits} {part.hits === 1 ? "passage" : "passages"} of past conversation (~{part.tokens}{" "}
          tokens) for “{part.query}”
        </div>
      )
    case "error":
      return (
        <p class="turn-error" role="alert">
          {part.failure === undefined ? "" : `${part.failure}: `}
          {part.message}
        </p>
      )
  }
}

const ItemView = ({ item, names }: { readonly item: Item; readonly names: UserNames }) => {
  switch (item.kind) {
    case "user":
      return (
        <article class={`msg msg-user${item.interface === "web" ? "" : " msg-other"}`} aria-label="Message">
          <header>
            <span class="who">{item.interface === "web" ? "You" : senderLabel(names, item)}</span>
            <time>{time(item.at)}</time>
            {item.queued === true && <span class="tag">queued</span>}
          </header>
          {item.text.length > 0 && <div class="msg-text">{item.text}</div>}
          {item.files !== undefined && item.files.length > 0 && <FileList files={item.files} />}
        </article>
      )
    case "assistant": {
      const last = item.parts[item.parts.length - 1]
      // Between a tool's result and the model's next words the turn is working, not stuck.
      const working = item.status === "thinking" ||
        (item.status === "streaming" && last?.kind === "tool" && last.result !== undefined)
      return (
        <article class={`msg msg-agent msg-${item.status}`} aria-label="Agent reply" aria-busy={item.status === "thinking" || item.status === "streaming"}>
          <header>
            <span class="who">Agent</span>
            <time>{time(item.at)}</time>
            {item.deliveredTo !== undefined && <span class="tag">sent to {senderLabel(names, item.deliveredTo)}</span>}
          </header>
          {item.parts.map((part, i) => <PartView key={part.kind === "tool" ? part.id : i} part={part} />)}
          {working && <p class="thinking" aria-label="Thinking">thinking…</p>}
          {item.silent === true && <p class="muted">(no reply)</p>}
        </article>
      )
    }
    case "outgoing":
      return (
        <article class="msg msg-agent msg-outgoing" aria-label="Agent message">
          <header>
            <span class="who">Agent → {senderLabel(names, item)}</span>
            <time>{time(item.at)}</time>
          </header>
          <Markdown text={item.text} />
          {item.file !== undefined && <FileList files={[item.file]} />}
        </article>
      )
    case "notice":
      return <p class="notice" role="status">{item.text}</p>
  }
}

export const ChatLog = ({ store }: { readonly store: Store }) => {
  const scroller = useRef<HTMLDivElement>(null)
  const { follow, onScroll: followScroll } = useStickToBottom(scroller, followSlack)
  const heightBeforeOlder = useRef<number | undefined>(undefined)
  const items = store.chat.value.items
  const firstKey = items[0]?.key

  const loadOlder = () => {
    const el = scroller.current
    if (el === null || store.before.value === undefined || store.loadingOlder.value) return
    heightBeforeOlder.current = el.scrollHeight
    void store.loadOlder()
  }

  useLayoutEffect(() => {
    const el = scroller.current
    if (el === null) return
    const before = heightBeforeOlder.current
    if (before !== undefined) {
      // An older page went in above: keep what the reader was looking at where it was.
      heightBeforeOlder.current = undefined
      el.scrollTop += el.scrollHeight - before
    } else if (follow.current) {
      el.scrollTop = el.scrollHeight
    }
  }, [items, firstKey])

  const onScroll = () => {
    const el = scroller.current
    if (el === null) return
    followScroll(el)
    if (el.scrollTop < followSlack) loadOlder()
  }

  return (
    <div class="log" ref={scroller} onScroll={onScroll} role="log" aria-live="polite" aria-label="Conversation" tabIndex={0}>
      {store.before.value !== undefined && (
        <button type="button" class="link older" onClick={loadOlder} disabled={store.loadingOlder.value}>
          {store.loadingOlder.value ? "Loading older messages…" : "Load older messages"}
        </button>
      )}
      {items.length === 0 && store.connection.value !== "logged-out" && <p class="muted empty">No messages yet. Say something below.</p>}
      {items.map((item) => <ItemView key={item.key} item={item} names={store.userNames.value} />)}
    </div>
  )
}

export const Composer = ({ store }: { readonly store: Store }) => {
  const [text, setText] = useState("")
  const [files, setFiles] = useState<ReadonlyArray<PickedFile>>([])
  const [sending, setSending] = useState(false)
  const [error, setError] = useState<string | undefined>(undefined)
  const [dragging, setDragging] = useState(false)
  const input = useRef<HTMLInputElement>(null)
  const counter = useRef(0)

  /** Files picked, dropped or pasted: refused here, with the server's caps in words, before a byte is uploaded. */
  const add = (list: ReadonlyArray<File>) => {
    if (list.length === 0) return
    const refused = refusal([...files, ...list].map((f) => ({ name: f.name === "" ? "the pasted file" : f.name, size: f.size })), store.mediaLimits.value)
    if (refused !== undefined) {
      setError(refused)
      return
    }
    setError(undefined)
    setFiles([...files, ...pick(list, () => ++counter.current)])
  }

  const submit = async () => {
    const message = text.trim()
    if ((message.length === 0 && files.length === 0) || sending) return
    setSending(true)
    let failed: string | undefined
    try {
      const read = await Promise.all(files.map(async (f) => ({ name: f.name, data: await f.data })))
      failed = await store.send(message, read)
    } catch (e) {
      failed = e instanceof Error ? e.message : "a file could not be read"
    }
    setSending(false)
    setError(failed)
    if (failed === undefined) {
      setText("")
      setFiles([])
    }
  }

  return (
    <form
      class={`composer${dragging ? " dragging" : ""}`}
      onSubmit={(e) => {
        e.preventDefault()
        void submit()
      }}
      onDragOver={(e) => {
        if (e.dataTransfer?.types.includes("Files") !== true) return
        e.preventDefault()
        setDragging(true)
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        setDragging(false)
        const dropped = Array.from(e.dataTransfer?.files ?? [])
        if (dropped.length === 0) return
        e.preventDefault()
        add(dropped)
      }}
    >
      {error !== undefined && <p class="send-error" role="alert">{error}</p>}
      {files.length > 0 && <PickedFiles files={files} remove={(key) => setFiles(files.filter((f) => f.key !== key))} />}
      <div class="composer-row">
        <input
          ref={input}
          type="file"
          multiple
          hidden
          aria-label="Files to attach"
          onChange={(e) => {
            add(Array.from(e.currentTarget.files ?? []))
            e.currentTarget.value = ""
          }}
        />
        <button type="button" class="attach" aria-label="Attach files" title="Attach files (or drop or paste them here)" onClick={() => input.current?.click()}>
          +
        </button>
        <textarea
          aria-label="Message to the agent"
          placeholder="Message (Enter sends, Shift+Enter for a new line)"
          rows={2}
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
          onPaste={(e) => {
            const pasted = Array.from(e.clipboardData?.files ?? [])
            if (pasted.length === 0) return
            e.preventDefault()
            add(pasted)
          }}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
              e.preventDefault()
              void submit()
            }
          }}
        />
        <button type="submit" disabled={sending || (text.trim().length === 0 && files.length === 0)}>{sending ? "Sending…" : "Send"}</button>
      </div>
    </form>
  )
}
