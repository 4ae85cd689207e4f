/**
 * Markdown (what models write) to Slack's mrkdwn. Slack reads `&`, `<` and `>` as markup, so they are escaped
 * everywhere, code included; outside code, emphasis, links, headings and bullets take Slack's forms. Code spans and
 * fenced blocks keep their text (a fence's language tag is dropped: Slack would show it as code).
 */

export const escapeSlack = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/** What Slack sends us: its escapes undone, so the model reads `a < b`, not `a &lt; b`. */
export const unescapeSlack = (text: string): string =>
  text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")

// Bold markers are parked on a control character while italics are converted, so `**a**` does not become `_a_`.
const boldMark = "\u0001"

const prose = (text: string): string =>
  escapeSlack(text)
    .split("\n")
    .map((line) =>
      line
        .replace(/^(\s*)#{1,6}\s+(.+?)\s*#*\s*$/, `$1${boldMark}$2${boldMark}`)
        .replace(/^(\s*)[-*+]\s+/, "$1• ")
    )
    .join("\n")
    .replace(/!?\[([^\]\n]+)\]\(([^)\s]+)\)/g, (_, label: string, url: string) => `<${url}|${label.replace(/\|/g, "∣")}>`)
    .replace(/\*\*(?=\S)([^*\n]+?)\*\*/g, `${boldMark}$1${boldMark}`)
    .replace(/__(?=\S)([^_\n]+?)__/g, `${boldMark}$1${boldMark}`)
    .replace(/(^|[^*\w])\*(?=\S)([^*\n]+?)\*(?![*\w])/g, "$1_$2_")
    .replace(/~~(?=\S)([^~\n]+?)~~/g, "~$1~")
    .replace(new RegExp(boldMark, "g"), "*")

/** Fenced blocks first (they may hold backticks), then inline code spans. */
const codePattern = /```[^\n`]*\n?[\s\S]*?(?:```|$)|`[^`\n]+`/g

const codeText = (code: string): string =>
  code.startsWith("```")
    ? "```" + escapeSlack(code.replace(/^```[^\n`]*\n?/, "").replace(/```$/, "")) + "```"
    : escapeSlack(code)

export const toMrkdwn = (markdown: string): string => {
  let out = ""
  let last = 0
  for (const match of markdown.matchAll(codePattern)) {
    out += prose(markdown.slice(last, match.index)) + codeText(match[0])
    last = match.index + match[0].length
  }
  return out + prose(markdown.slice(last))
}
