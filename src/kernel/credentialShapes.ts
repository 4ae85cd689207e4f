import { mapStrings } from "./secretGuard.js"

/**
 * STRICT mode's redaction intent (seed 002: "same as SAFE + redaction intent"). Known secrets (the folder's .env,
 * provider keys) are redacted in every mode; STRICT also redacts what has the shape of a credential although kern
 * does not know it: private keys, cloud and vendor tokens, bearer tokens, JWTs, passwords in URLs and `NAME=value`
 * assignments whose name says secret and whose value has a digit (`apiKey = config.apiKey` is
 * code, not a key). The model sees `[redacted:credential]` where one was.
 */
export const credentialMarker = "[redacted:credential]"

const wholeShapes: ReadonlyArray<RegExp> = [
  /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bgh[pousr]_[A-Za-z0-9]{30,}\b/g,
  /\bgithub_pat_[A-Za-z0-9_]{22,}\b/g,
  /\bglpat-[A-Za-z0-9_-]{20,}\b/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g,
  /\bsk-(?:ant-|proj-|or-)?[A-Za-z0-9_-]{20,}\b/g,
  /\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}\b/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g
]

/** Shapes whose first group is kept (the scheme or the name), the rest replaced. */
const prefixedShapes: ReadonlyArray<RegExp> = [
  /(\b(?:Bearer|Basic|token)\s+)[A-Za-z0-9._~+/-]{16,}=*/gi,
  /(\b[A-Za-z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY)[A-Za-z0-9_]*["']?\s*[=:]\s*["']?)(?![[])(?=[^\s"',;]*\d)[^\s"',;]{6,}/gi,
  /(\/\/[^\s:/@]+:)[^\s@/]{3,}(?=@)/g
]

/** `text` with every credential-shaped run replaced by `[redacted:credential]`. */
export const redactCredentialShapes = (text: string): string => {
  let out = text
  for (const shape of wholeShapes) out = out.replace(shape, credentialMarker)
  for (const shape of prefixedShapes) out = out.replace(shape, (_, kept: string) => `${kept}${credentialMarker}`)
  return out
}

/** `value` with credential shapes redacted in every string; the same reference when there was none. */
export const redactCredentialShapesIn = <A>(value: A): A => mapStrings(value, redactCredentialShapes) as A
