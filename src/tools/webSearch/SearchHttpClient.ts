import { HttpClient } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Context, Layer } from "effect"

/**
 * web_search's HTTP client, apart from the tools' GuardedHttpClient. The address guard is there for URLs the model
 * chooses; web_search's URL is the operator's (`webSearch.url` or the provider's own address, with a fixed path) and
 * the model picks only the query text, sent as a parameter. A loopback SearXNG is a legitimate choice that the guard
 * would refuse. Redirects are not followed, so an answer cannot send the request anywhere else.
 */
export class SearchHttpClient extends Context.Tag("kern/tools/SearchHttpClient")<SearchHttpClient, HttpClient.HttpClient>() {}

export const layer: Layer.Layer<SearchHttpClient> = Layer.effect(SearchHttpClient, HttpClient.HttpClient).pipe(
  Layer.provide(NodeHttpClient.layer)
)
