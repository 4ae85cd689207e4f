/**
 * Makes text from a model (or a tool, or a web page a tool fetched) safe to write to a terminal. Control
 * sequences in it would be obeyed by the terminal: OSC 52 writes the operator's clipboard, `ESC[2J` clears the
 * screen, `ESC]0;…BEL` sets the window title, cursor moves and a bare `\r` overwrite what was shown (a command to
 * approve, a path), and bidi overrides reorder it. Each such character is shown visibly instead, as `cat -v` does
 * (`^[` for ESC, `^M` for a bare CR, `M-^[` for the C1 CSI), bidi controls as `<U+202E>`. Newlines, tabs and
 * every printable character, emoji and CJK included, pass unchanged; `\r\n` stays a line end. The web approval
 * dialog shows a call's arguments through the same function: a browser obeys bidi controls as a terminal does.
 */

// C0 controls but \t and \n, DEL, C1 controls, the bidi embedding, override and isolate controls, and the
// invisible direction marks (LRM, RLM, the Arabic letter mark) that reorder neutral characters around them. The
// test has no `g` flag, so it keeps no state between calls; `replace` resets the global one's.
const unsafeChar = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/
const unsafeChars = new RegExp(unsafeChar.source, "g")

const visible = (char: string, offset: number, text: string): string => {
  const code = char.charCodeAt(0)
  if (code === 13 && text.charCodeAt(offset + 1) === 10) return char
  if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`
  if (code === 0x7f) return "^?"
  if (code < 0xa0) return `M-^${String.fromCharCode(code - 0x80 + 0x40)}`
  return `<U+${code.toString(16).toUpperCase()}>`
}

/** `text` with every terminal control character but newline and tab shown visibly. */
export const neutralizeControls = (text: string): string =>
  unsafeChar.test(text) ? text.replace(unsafeChars, visible) : text
