import type { Principal } from "./guard.js"

/**
 * Who reads a stored file over `GET /media/<id>`, and what they may read: the scope rule of the history routes. The
 * HTTP API's callers (the bearer token, a browser session a ticket made) are the operator's, who opens every
 * conversation (`/sessions`, `/history?session=`): any file linked to a conversation. A viewer confined to one
 * conversation (a paired person) reads only the files linked to that one, never the operator's.
 */
export type MediaViewer =
  | { readonly _tag: "operator" }
  | { readonly _tag: "conversation"; readonly conversationId: string }

export const viewerOf = (_principal: typeof Principal.Service): MediaViewer => ({ _tag: "operator" })

/** Whether `viewer` may read a file linked to `conversations`: a file linked to none is nobody's (never served). */
export const mayView = (viewer: MediaViewer, conversations: ReadonlyArray<string>): boolean =>
  viewer._tag === "operator" ? conversations.length > 0 : conversations.includes(viewer.conversationId)

/** The raster images a browser may show in place; every other type (SVG, HTML, PDF, text, …) is only downloaded. */
const inlineTypes: ReadonlySet<string> = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"])

/**
 * The headers a stored file is served with: its stored (sniffed) type, never one from the request; shown in place
 * only when it is a raster image, a download otherwise; never sniffed by the browser; and a policy under which the
 * document it might become runs nothing (no script, no plugin, a sandbox of its own).
 */
export const mediaHeaders = (mediaType: string): Readonly<Record<string, string>> => ({
  "content-type": mediaType,
  "content-disposition": inlineTypes.has(mediaType) ? "inline" : "attachment",
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; img-src 'self'; script-src 'none'; object-src 'none'; base-uri 'none'; " +
    "form-action 'none'; frame-ancestors 'none'; sandbox",
  "cache-control": "private, no-cache"
})
