import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Approvals, localOperator } from "../../../runtime/Approvals.js"
import { approvalInfo } from "../../approvalInfo.js"
import { ApprovalDecisionRequest } from "../api.js"
import { Forbidden, NotFound } from "../ApiError.js"
import { KernApi } from "../KernApi.js"
import { readBody } from "../readBody.js"
import { ServerInfo } from "../ServerInfo.js"

/** The tool calls waiting for a person, and the operator's answer to one. */
export const layer = HttpApiBuilder.group(KernApi, "approvals", (handlers) =>
  Effect.gen(function*() {
    const approvals = yield* Approvals
    const server = yield* ServerInfo
    return handlers
      .handle("list", () => Effect.map(approvals.pending, (pending) => ({ approvals: pending.map(approvalInfo) })))
      // Raw: the body is read here, counted against the cap and checked for depth before it is parsed.
      .handleRaw("decide", ({ path, request }) =>
        Effect.gen(function*() {
          const body = yield* readBody(request, ApprovalDecisionRequest, server.bodyLimitBytes)
          // The HTTP API's token is the operator's: whoever holds it answers as the operator.
          const resolution = yield* approvals.decide(path.id, body.approved, localOperator("http")).pipe(
            Effect.mapError((error) =>
              error.reason === "unknown_id" ? new NotFound({ error: error.message }) : new Forbidden({ error: error.message })
            )
          )
          return { id: resolution.id, approved: resolution.approved, outcome: resolution.outcome, by: resolution.by }
        }))
  }))
