import { HttpClient, HttpClientError } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Cause, Context, Effect, Exit, Layer, Option, Runtime } from "effect"
import type * as NodeDns from "node:dns"
import * as NodeNet from "node:net"
import { refusal } from "./addressPolicy.js"
import { HostResolver } from "./HostResolver.js"
import { Workspace } from "./Workspace.js"

/**
 * The tools' HTTP client: it connects only where the address policy allows. A Tag of its own, so it never becomes
 * the ambient HttpClient of the layers built on the tools (channels, the model provider), which reach local
 * servers by design.
 */
export class GuardedHttpClient extends Context.Tag("kern/tools/GuardedHttpClient")<
  GuardedHttpClient,
  HttpClient.HttpClient
>() {}

/** A connection the address policy refused when it was opened; webfetch reports it as PERMISSION_DENIED. */
export class AddressRefusedError extends Error {
  readonly code = "EKERN_ADDRESS_REFUSED"
}

/** Finds the refusal behind a failed request, however the HTTP client wrapped it. */
export const findAddressRefusal = (error: unknown): AddressRefusedError | undefined => {
  for (let cause = error, depth = 0; cause !== undefined && cause !== null && depth < 5; depth++) {
    if (cause instanceof AddressRefusedError) return cause
    cause = (cause as { readonly cause?: unknown }).cause
  }
  return undefined
}

/** A lookup that found no usable address, as Node's own errors look (`code` ENOTFOUND). */
const notFound = (hostname: string, message: string) =>
  Object.assign(new Error(message), { code: "ENOTFOUND", hostname })

/** Node's client whose connections resolve names through the HostResolver and the address policy. */
const nodeClient: Layer.Layer<HttpClient.HttpClient, never, HostResolver | Workspace> = NodeHttpClient
  .layerWithoutAgent.pipe(
    Layer.provide(Layer.scoped(
      NodeHttpClient.HttpAgent,
      Effect.gen(function*() {
        const resolver = yield* HostResolver
        const workspace = yield* Workspace
        const runtime = yield* Effect.runtime<never>()
        const lookup = (
          hostname: string,
          options: NodeDns.LookupOptions,
          callback: (error: NodeJS.ErrnoException | null, address: string | Array<NodeDns.LookupAddress>, family?: number) => void
        ) =>
          Runtime.runCallback(runtime)(resolver.resolve(hostname), {
            onExit: (exit) => {
              if (Exit.isFailure(exit)) {
                // The resolver's own reason (ENOTFOUND, a timeout, a defect) travels on, not a generic one.
                const message = Cause.failureOption(exit.cause).pipe(
                  Option.match({
                    onNone: () => `could not resolve ${hostname}: ${Cause.pretty(exit.cause)}`,
                    onSome: (failure) => failure.message
                  })
                )
                return callback(notFound(hostname, message), "")
              }
              const refused = refusal(hostname, exit.value, workspace.allowPrivateHosts)
              if (refused !== undefined) return callback(new AddressRefusedError(refused), "")
              const family = familyOf(options.family)
              const usable = exit.value.filter((address) => family === undefined || NodeNet.isIP(address) === family)
              const [first] = usable
              if (first === undefined) return callback(notFound(hostname, `could not resolve ${hostname}: no IPv${family} address`), "")
              if (options.all === true) {
                return callback(null, usable.map((address) => ({ address, family: NodeNet.isIP(address) })))
              }
              return callback(null, first, NodeNet.isIP(first))
            }
          })
        return yield* NodeHttpClient.makeAgent({ lookup })
      })
    ))
  )

const familyOf = (family: NodeDns.LookupOptions["family"]) =>
  family === "IPv4" ? 4 : family === "IPv6" ? 6 : family === 4 || family === 6 ? family : undefined

/**
 * The HTTP client of the tools. Every connection it opens resolves its host name through the HostResolver and
 * connects only to addresses the policy allows, checked at that moment. webfetch also checks each URL before it
 * asks, for a clear error; this check is the one that holds, since a name can resolve to a public address for the
 * first check and to a private one when the connection is made (DNS rebinding). IP literals are never looked up,
 * so the client checks them itself before it sends.
 */
export const layer: Layer.Layer<GuardedHttpClient, never, HostResolver | Workspace> = Layer.effect(
  GuardedHttpClient,
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const client = yield* HttpClient.HttpClient
    return HttpClient.mapRequestEffect(client, (request) => {
      const host = URL.canParse(request.url) ? new URL(request.url).hostname.replace(/^\[|\]$/g, "") : ""
      const refused = NodeNet.isIP(host) === 0 ? undefined : refusal(host, [host], workspace.allowPrivateHosts)
      return refused === undefined
        ? Effect.succeed(request)
        : Effect.fail(
          new HttpClientError.RequestError({ request, reason: "Transport", cause: new AddressRefusedError(refused) })
        )
    })
  })
).pipe(Layer.provide(nodeClient))
