import { Context } from "effect"
import type { Logins } from "./auth.js"

/** What the routes say about the server itself, and the limits it serves under: set once when it starts. */
export class ServerInfo extends Context.Tag("kern/channels/web/ServerInfo")<ServerInfo, {
  readonly host: string
  readonly port: number
  /** What runs the server, as /status reports it (`kern run`, `kern start`). */
  readonly command: string
  readonly startedAtMs: number
  /** `http://host:port` (with basePath), as a client on this machine reaches it (login links). */
  readonly baseUrl: string
  /**
   * Where the agent's routes sit on the server: "" alone (`kern run`, `kern start`), `/agents/<name>` under
   * `kern serve`, which takes it off before the routes see the path. The browser's cookie is scoped to it.
   */
  readonly basePath: string
  /** Request bodies beyond this are refused with 413. */
  readonly bodyLimitBytes: number
  /** The cap of `POST /message`'s body: bodyLimitBytes plus the files a message may carry (base64). */
  readonly messageBodyLimitBytes: number
}>() {}

/** The login tickets and browser sessions of this server (auth.ts's makeLogins). */
export class BrowserLogins extends Context.Tag("kern/channels/web/BrowserLogins")<BrowserLogins, Logins>() {}
