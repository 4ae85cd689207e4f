/** `text` cut to at most `max` characters, ending in "..." when cut: a value shown on one line of a message. */
export const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 3)}...` : text)
