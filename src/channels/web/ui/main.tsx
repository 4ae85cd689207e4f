import { render } from "preact"
import "./app.css"
import "./polish.css"
import "./picker.css"
import "./schedules/schedules.css"
import { App } from "./App.js"
import { makeMarkdown } from "./renderMarkdown.js"
import { MarkdownContext } from "./Markdown.js"
import { makeStore } from "./store.js"

const root = document.getElementById("app")
if (root !== null) {
  render(
    <MarkdownContext.Provider value={makeMarkdown(window)}>
      <App store={makeStore()} />
    </MarkdownContext.Provider>,
    root
  )
}
