import type { SearchProvider } from "../../config/webSearch.js"
import { clip } from "../../config/clip.js"
import { type ToolFailure, toolFailure } from "../../kernel/ToolFailure.js"

const names: Record<SearchProvider, string> = { searxng: "SearXNG", brave: "Brave Search", tavily: "Tavily" }

export const providerName = (provider: SearchProvider): string => names[provider]

/** What an error answer said, on one line, short: the provider's own words help the operator most. */
const detail = (body: string): string => {
  const text = body.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim()
  return text === "" ? "" : `: ${clip(text, 200)}`
}

/** A provider's error status as the kernel's error codes, with what to do about it. */
export const statusFailure = (
  provider: SearchProvider,
  status: number,
  body: string,
  keyEnv: string | undefined
): ToolFailure => {
  const who = `${providerName(provider)} answered ${status}`
  if (status === 429) {
    return toolFailure("RATE_LIMITED", `${who}: too many searches, the plan's rate limit is reached; wait before searching again${detail(body)}`, true)
  }
  if (provider === "searxng" && status === 403) {
    return toolFailure(
      "PERMISSION_DENIED",
      `${who}: the instance refuses format=json; add json to search.formats in its settings.yml${detail(body)}`
    )
  }
  if (status === 401 || status === 403) {
    const key = keyEnv === undefined ? "the key" : keyEnv
    return toolFailure("PERMISSION_DENIED", `${who}: the API key was refused; check ${key} in .kern/.env${detail(body)}`)
  }
  if (status >= 500) return toolFailure("NETWORK_ERROR", `${who}: the search service failed; try again later${detail(body)}`, true)
  return toolFailure("VALIDATION_ERROR", `${who}: the search was not accepted${detail(body)}`)
}

/** A 2xx answer that is not the provider's JSON: an HTML page (a wrong url, a login wall) or another shape. */
export const notJsonFailure = (provider: SearchProvider, url: string, contentType: string, body: string): ToolFailure =>
  toolFailure(
    "NETWORK_ERROR",
    /^\s*</.test(body) || /html/i.test(contentType)
      ? `${providerName(provider)} at ${url} answered an HTML page, not JSON; check webSearch.url in .kern/config.json` +
        (provider === "searxng" ? " (the instance's address) and that json is in search.formats of its settings.yml" : "")
      : `${providerName(provider)} at ${url} answered something that is not JSON (${contentType || "no content type"})${detail(body)}`
  )
