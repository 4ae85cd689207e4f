/**
 * The SSE `event:` name a kern event travels under: its `type`, except a turn's `error`, which travels as
 * `turn-error`. Browsers hand an event named `error` to `EventSource.onerror` as well, the handler for a broken
 * connection, so a failed turn would read as a lost connection. The JSON's `type` stays `error`. Plain (no Effect):
 * the web UI imports it too.
 */
export const sseEventName = (type: string): string => (type === "error" ? "turn-error" : type)
