import { Context, Effect, Layer } from "effect"
import * as NodeDns from "node:dns"
import * as NodeNet from "node:net"
import { toolFailure } from "../kernel/ToolFailure.js"

/** Name resolution for webfetch's address check: a port, so tests can map names to chosen addresses. */
export class HostResolver extends Context.Tag("kern/tools/HostResolver")<HostResolver, {
  readonly resolve: (host: string) => Effect.Effect<ReadonlyArray<string>, ReturnType<typeof toolFailure>>
}>() {}

/** The operating system's resolver (getaddrinfo: /etc/hosts, DNS), every address of the name. */
export const layerNode: Layer.Layer<HostResolver> = Layer.succeed(HostResolver, {
  resolve: (host) =>
    NodeNet.isIP(host) !== 0
      ? Effect.succeed([host])
      : Effect.async<ReadonlyArray<string>, ReturnType<typeof toolFailure>>((resume) => {
        NodeDns.lookup(host, { all: true, verbatim: true }, (error, addresses) => {
          if (error !== null) {
            resume(Effect.fail(toolFailure("NETWORK_ERROR", `could not resolve ${host}: ${error.code ?? error.message}`, true)))
          } else {
            resume(Effect.succeed(addresses.map((entry) => entry.address)))
          }
        })
      }).pipe(Effect.withSpan("kern.tools.HostResolver.resolve"))
})

/** A fixed table (tests): names not in it fail to resolve. */
export const layerStatic = (table: Readonly<Record<string, ReadonlyArray<string>>>): Layer.Layer<HostResolver> =>
  Layer.succeed(HostResolver, {
    resolve: (host) => {
      if (NodeNet.isIP(host) !== 0) return Effect.succeed([host])
      const addresses = table[host]
      return addresses === undefined
        ? Effect.fail(toolFailure("NETWORK_ERROR", `could not resolve ${host}: ENOTFOUND`))
        : Effect.succeed(addresses)
    }
  })
