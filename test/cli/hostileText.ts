/** A reply that would set the clipboard, clear the screen, retitle the window and hide text, obeyed raw. */
export const hostileReply = "Done.\x1b]52;c;ZXZpbA==\x07 \x1b[2J\x1b[H\u009b2J \x1b]0;pwned\x07 \u202eabc\rXY 👍🏽 漢字\nsecond\tline"
export const hostileShown = "Done.^[]52;c;ZXZpbA==^G ^[[2J^[[HM-^[2J ^[]0;pwned^G <U+202E>abc^MXY 👍🏽 漢字\nsecond\tline"
/** What must never reach the terminal raw: controls but newline and tab, C1 controls, bidi overrides. */
export const rawControl = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/
