import { render } from "preact"
import "../app.css"
import "../picker.css"
import "./host.css"
import { HostPage } from "./HostPage.js"
import { makeHostState } from "./hostState.js"

const root = document.getElementById("app")
if (root !== null) render(<HostPage state={makeHostState()} />, root)
