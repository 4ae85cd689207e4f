import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect, Layer } from "effect"
import { KnownSecrets } from "../config/KnownSecrets.js"
import { redactHttpBody } from "./redactHttpBody.js"

/**
 * The agent's outgoing HTTP client with every known secret taken out of what it sends: the model and embeddings
 * requests (the conversation, the summaries' input, the texts recall embeds) and the Telegram and Slack calls (the
 * replies). One door for every body kern sends to a provider or a chat service, whatever built it. Headers and URLs
 * are left alone: that is where the keys themselves travel, to the service they belong to.
 */
export const layer: Layer.Layer<HttpClient.HttpClient, never, HttpClient.HttpClient | KnownSecrets> = Layer.effect(
  HttpClient.HttpClient,
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const { secrets } = yield* KnownSecrets
    if (secrets.length === 0) return client
    return HttpClient.mapRequest(client, (request) => {
      const body = redactHttpBody(request.body, secrets)
      return body === request.body ? request : HttpClientRequest.setBody(request, body)
    })
  })
)
