import * as Context from "effect/Context"

/**
 * The environment the agent inherited. Only the program's edge reads `process.env`; everything else asks for this,
 * so tests and embedding apps decide what an agent sees.
 */
export class ProcessEnv extends Context.Tag("kern/config/ProcessEnv")<
  ProcessEnv,
  Readonly<Record<string, string | undefined>>
>() {}
