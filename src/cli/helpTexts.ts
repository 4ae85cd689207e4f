import pkg from "../../package.json" with { type: "json" }
import { commandDocs } from "./commands.js"
import { renderHelp } from "./help.js"

/** What `kern <path> --help` prints, plain and coloured, and whether the path is a bare group (help without --help). */
export interface HelpText {
  readonly plain: string
  readonly color: string
  readonly bareGroup: boolean
}

/** Every command path's help ("" for kern itself), rendered by the full CLI's own renderer: what dist/help.json holds. */
export const helpTexts = (): Record<string, HelpText> =>
  Object.fromEntries(Object.entries(commandDocs).map(([path, doc]) => {
    const render = (color: boolean) => `${renderHelp(path, commandDocs, `v${pkg.version}`, { color })}\n`
    const bareGroup = path !== "" && doc.runsAlone !== true && Object.keys(commandDocs).some((other) => other.startsWith(`${path} `))
    return [path, { plain: render(false), color: render(true), bareGroup }]
  }))
