import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import { isJsonObject } from "../kernel/toolArgs.js"

/** One content part of a tool result, as the MCP schema has it (fields kern reads). */
type Part = { readonly [key: string]: unknown }

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

/** Bytes a base64 string holds. */
const base64Bytes = (data: unknown): number => {
  const value = text(data) ?? ""
  return Math.floor((value.replace(/=+$/, "").length * 3) / 4)
}

/** One part as text the model can read: images and audio become a note of what they were. */
const partText = (part: Part): string => {
  switch (part["type"]) {
    case "text":
      return text(part["text"]) ?? ""
    case "image":
    case "audio":
      return `[${String(part["type"])}: ${text(part["mimeType"]) ?? "unknown type"}, ${base64Bytes(part["data"])} bytes, not shown]`
    case "resource": {
      const resource = isJsonObject(part["resource"]) ? part["resource"] : {}
      const uri = text(resource["uri"]) ?? "?"
      const body = text(resource["text"])
      return body !== undefined
        ? `[resource ${uri}]\n${body}`
        : `[resource ${uri}: ${text(resource["mimeType"]) ?? "binary"}, ${base64Bytes(resource["blob"])} bytes, not shown]`
    }
    case "resource_link":
      return `[resource link ${text(part["uri"]) ?? "?"}${text(part["name"]) === undefined ? "" : ` (${text(part["name"])})`}]`
    default:
      return `[${String(part["type"])} content, not shown]`
  }
}

/** A result's content and structured content as one text; structured content as JSON when no text says it. */
export const resultText = (result: { readonly [key: string]: unknown }): string => {
  const content = Array.isArray(result["content"]) ? result["content"].filter(isJsonObject) : []
  const parts = content.map(partText).filter((line) => line !== "")
  const structured = result["structuredContent"]
  if (structured !== undefined) parts.push(JSON.stringify(structured, null, 2))
  return parts.join("\n")
}

/** Codes of JSON-RPC and the MCP SDK. */
const codes = { connectionClosed: -32000, requestTimeout: -32001, methodNotFound: -32601, invalidParams: -32602 }

const errorCode = (error: unknown): number | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "number" ? error.code : undefined

/** The limit the SDK names in a RequestTimeout's data (`{ timeout }`, or `{ maxTotalTimeout }`). */
const timeoutOf = (error: unknown): number | undefined => {
  const data = typeof error === "object" && error !== null && "data" in error ? error.data : undefined
  if (typeof data !== "object" || data === null) return undefined
  const limit = "timeout" in data ? data.timeout : "maxTotalTimeout" in data ? data.maxTotalTimeout : undefined
  return typeof limit === "number" ? limit : undefined
}

const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** A failed request to a server as the kernel's error codes. */
export const requestFailure = (server: string, tool: string, error: unknown): ToolFailure => {
  const code = errorCode(error)
  const message = errorMessage(error)
  const where = `MCP tool "${tool}" of server "${server}"`
  switch (code) {
    case codes.connectionClosed:
      return toolFailure("NETWORK_ERROR", `${where}: the server closed the connection during the call (kern restarts it): ${message}`)
    case codes.requestTimeout: {
      const limit = timeoutOf(error)
      return toolFailure("TIMEOUT", `${where} did not answer in time${limit === undefined ? "" : ` (${limit} ms)`}: ${message}`)
    }
    case codes.methodNotFound:
      return toolFailure("NOT_FOUND", `${where}: ${message}`)
    case codes.invalidParams:
      return toolFailure("VALIDATION_ERROR", `${where} refused its arguments: ${message}`)
    default:
      return toolFailure("UNEXPECTED", `${where} failed: ${message}`)
  }
}

/** A result the tool itself marked `isError`: its text is the reason. */
export const toolErrorFailure = (server: string, tool: string, result: { readonly [key: string]: unknown }): ToolFailure =>
  toolFailure("UNEXPECTED", `MCP tool "${tool}" of server "${server}" reported an error: ${resultText(result) || "(no detail)"}`)
