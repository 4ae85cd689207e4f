import type { PlatformError } from "@effect/platform/Error"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import type { AgentFileError } from "../storage/agentFiles.js"

/** The errno code (ELOOP, ENOTDIR…) behind a platform error, when the platform kept it. */
export const errnoCode = (error: PlatformError): string | undefined => {
  if (error._tag !== "SystemError") return undefined
  const cause: unknown = error.cause
  if (typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string") {
    return cause.code
  }
  return undefined
}

/** Turns a file-system failure on `display` (the path as the model named it) into a failure the model can act on. */
export const fileFailure = (display: string) => (error: PlatformError): ToolFailure => {
  const code = errnoCode(error)
  if (code === "ELOOP") return toolFailure("VALIDATION_ERROR", `${display}: too many levels of symbolic links (a symlink loop)`)
  if (code === "EISDIR") return toolFailure("VALIDATION_ERROR", `${display} is a directory, not a file`)
  if (code === "ENOTDIR") return toolFailure("NOT_FOUND", `${display}: a part of the path is not a directory`)
  if (code === "ENAMETOOLONG") return toolFailure("VALIDATION_ERROR", `${display}: the path is too long`)
  if (error._tag === "SystemError") {
    switch (error.reason) {
      case "NotFound":
        return toolFailure("NOT_FOUND", `${display} does not exist`)
      case "PermissionDenied":
        return toolFailure("PERMISSION_DENIED", `${display}: permission denied by the operating system`)
      case "Busy":
        return toolFailure("UNEXPECTED", `${display} is busy; try again`, true)
      default:
        break
    }
  }
  return toolFailure("UNEXPECTED", `${display}: ${error.message}`)
}

/** A message of an unknown thrown value, for failures at the Node edge. */
export const describeUnknown = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** A file the door (src/storage/agentFiles.ts) did not read, as a failure the model can act on. */
export const agentFileFailure = (error: AgentFileError): ToolFailure => {
  switch (error.reason) {
    case "missing":
      return toolFailure("NOT_FOUND", `${error.path} does not exist`)
    case "outside":
    case "kern":
    case "hard-link":
      return toolFailure("PERMISSION_DENIED", error.message)
    case "unreadable":
      return toolFailure("UNEXPECTED", error.message)
    default:
      return toolFailure("VALIDATION_ERROR", error.message)
  }
}
