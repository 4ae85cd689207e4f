import { Effect, Option } from "effect"
import type { LoadedConfig } from "../../config/AgentConfig.js"
import * as Client from "./client.js"
import { baseUrl } from "./serverSetup.js"

/** The agent's own server, found from its config: its port and token. */
export const clientSettings = (loaded: LoadedConfig): Option.Option<Client.ClientSettings> => {
  const token = loaded.env.KERN_AUTH_TOKEN
  const port = loaded.config.port
  return token === undefined || token === "" || port === undefined
    ? Option.none()
    : Option.some({ baseUrl: baseUrl({ host: loaded.config.host, port }), token })
}

/**
 * The running agent of a folder, when one answers on its configured address as that agent (its name); none when it
 * does not run. Whatever runs it (`kern start`, or `kern run` in another terminal), clients talk to it over HTTP.
 */
export const findRunning = (loaded: LoadedConfig) =>
  Effect.gen(function*() {
    const settings = clientSettings(loaded)
    if (Option.isNone(settings)) return Option.none()
    const client = yield* Client.make(settings.value)
    const health = yield* Effect.option(client.health)
    return Option.isSome(health) && health.value.name === loaded.config.name
      ? Option.some({ client, health: health.value })
      : Option.none()
  })
