import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base"

/**
 * Token counts with the o200k_base encoding (GPT-4o and later; close enough for other providers' budgets). Pure:
 * the same text always counts the same, so callers may cache by text. Counting is ~5 MB/s, so `countTokensAtMost`
 * answers the common "does it fit?" question without encoding when the UTF-8 length alone settles it: every token
 * covers at least one byte, so a text of n bytes has at most n tokens.
 */
export const countTokens = (text: string): number => (text === "" ? 0 : countO200k(text))

/** The text's token count when it may exceed `limit`, else its UTF-8 length, an upper bound within the limit. */
export const tokensUpTo = (text: string, limit: number): number => {
  const bytes = Buffer.byteLength(text, "utf8")
  return bytes <= limit ? bytes : countTokens(text)
}

/** Whether `text` is within `limit` tokens, encoding only when its byte length leaves the answer open. */
export const fitsTokens = (text: string, limit: number): boolean => tokensUpTo(text, limit) <= limit
