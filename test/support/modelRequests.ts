/** What a recorded Chat Completions request (the fake model server's) carried: the tools offered, the results sent. */
interface ChatBody {
  readonly tools?: ReadonlyArray<{ readonly function: { readonly name: string } }>
  readonly messages?: ReadonlyArray<{ readonly role: string; readonly tool_call_id?: string; readonly content: unknown }>
}

/** The names of the tools the model was offered. */
export const offeredTools = (body: unknown): ReadonlyArray<string> => ((body as ChatBody).tools ?? []).map((t) => t.function.name)

/** The tool results the model was sent back, by call id (calls run in parallel: they finish in any order). */
export const toolResultsById = (body: unknown): Readonly<Record<string, string>> =>
  Object.fromEntries(
    ((body as ChatBody).messages ?? [])
      .filter((m) => m.role === "tool")
      .map((m) => [m.tool_call_id ?? "", typeof m.content === "string" ? m.content : JSON.stringify(m.content)])
  )
