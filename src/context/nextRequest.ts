import { Effect } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import { counted } from "../config/counted.js"
import type { SessionHistory } from "./SessionHistory.js"
import { promptToolsOf, renderSystemPrompt, type SystemPromptOptions, type SystemSection, systemSectionsFrom } from "./systemPrompt.js"
import { mainConversation } from "../kernel/Audience.js"
import { chatOfConversation, conversationOfSession } from "../session/conversationIds.js"
import type { RegisteredTool } from "../kernel/ToolRegistry.js"
import type { FileCache } from "../memory/fileCache.js"
import type { TokenCounter } from "../model/tokenizer.js"
import { ContextWindow, type Preview } from "./ContextWindow.js"
import { type ToolsCost, toolsCostOf } from "./toolTokens.js"

/**
 * The tools a request offers (src/turn/offeredTools.ts decides them): all it lists in `<tools>`, those whose
 * definitions it carries, and whether its MCP tools go by name only.
 */
export interface RequestTools {
  readonly listed: ReadonlyArray<RegisteredTool>
  readonly defined: ReadonlyArray<RegisteredTool>
  readonly lazyMcp: boolean
}

/**
 * What a request carries besides the conversation, for the tools offered: the system prompt (without its
 * conversation summary) by section, and the tool definitions' tokens (builtin and MCP apart). The turn's system prompt
 * and toolkit are made by the same functions (context/systemPrompt.ts, kernel/aiTools.ts, toolTokens.ts).
 */
export const requestParts = (
  tools: RequestTools,
  files: FileCache,
  count: TokenCounter,
  run?: SystemPromptOptions["run"],
  skills?: SystemPromptOptions["skills"]
) =>
  Effect.gen(function*() {
    const sections = yield* systemSectionsFrom(files, { tools: promptToolsOf(tools.listed, tools.lazyMcp), run, skills })
    const toolsCost = toolsCostOf(tools.listed, tools.defined, count)
    return { sections, system: renderSystemPrompt(sections), toolsTokens: toolsCost.builtin + toolsCost.mcp, toolsCost }
  })

/**
 * Whose conversation a session is, as far as its id says: none for the operator's; for another, its chat (the user
 * of a direct chat has the chat's id). The tool scope is the config's: the figures count the operator's tools.
 */
const sessionRun = (sessionId: string): SystemPromptOptions["run"] => {
  const conversationId = conversationOfSession(sessionId)
  if (conversationId === mainConversation) return undefined
  const chat = chatOfConversation(conversationId)
  const channel = chat?.chat ?? conversationId
  return { audience: { conversationId, interface: chat?.interface ?? "a chat", channel, userId: channel, memory: "shared" } }
}

export interface NextRequest extends Preview {
  /** The system prompt as sent, by section, its conversation summary last when messages are trimmed. */
  readonly sections: ReadonlyArray<SystemSection>
  /** What the next turn's request will hold that these figures do not, in words (see leftOutOfNext). */
  readonly leftOut: ReadonlyArray<string>
  /** What its tool definitions cost, builtin and MCP apart, and what offering MCP tools by name saved. */
  readonly toolsCost: ToolsCost
}

/**
 * What the next request's figures leave out, said with them wherever they are shown (`kern context show`, GET
 * /context/*, the web UI): the next turn's own message, waiting in the inbox or not sent yet; what auto-recall adds for
 * it, when on; and that a paired user's turn is offered only their scope's tools, where these figures count the
 * operator's.
 */
export const leftOutOfNext = (
  config: { readonly autoRecall: boolean; readonly autoRecallTokens: number },
  waiting: number
): ReadonlyArray<string> => [
  waiting > 0
    ? `the next turn's own message (${counted(waiting, "message waits", "messages wait")} in the inbox: the next turn answers the first)`
    : "the next turn's own message",
  ...(config.autoRecall
    ? [`what auto-recall adds for that message once messages are trimmed (up to ${config.autoRecallTokens.toLocaleString("en-US")} tokens)`]
    : []),
  "a paired user's turn is offered only their scope's tools (these figures count the operator's)"
]

/**
 * The request the operator's next turn would send in a session (offered every registered tool; in a session of
 * another conversation, that conversation's own system prompt), before that turn's own message: what `GET /context/*` and `kern context show` report, planned and built by `ContextWindow.preview`
 * as the turn plans and builds its request, with nothing moved or summarized.
 */
export const nextRequest = (input: {
  readonly sessionId: string
  readonly history: SessionHistory
  readonly tools: RequestTools
  /** The skills the system prompt lists (src/turn/offeredTools.ts nextTurnTools gives both). */
  readonly skills?: SystemPromptOptions["skills"]
  readonly files: FileCache
  readonly modelId: string
  /** Messages waiting in kern.db's inbox, not yet in the session. */
  readonly waiting: number
}) =>
  Effect.gen(function*() {
    const { config } = yield* AgentConfig
    const context = yield* ContextWindow
    const parts = yield* requestParts(input.tools, input.files, yield* context.counter, sessionRun(input.sessionId), input.skills)
    const preview = yield* context.preview({
      sessionId: input.sessionId,
      history: input.history,
      system: parts.system,
      toolsTokens: parts.toolsTokens,
      modelId: input.modelId
    })
    const sections: ReadonlyArray<SystemSection> = preview.conversationSummary === ""
      ? parts.sections
      : [...parts.sections, { kind: "conversation-summary", source: "conversation", text: preview.conversationSummary }]
    return { ...preview, sections, leftOut: leftOutOfNext(config, input.waiting), toolsCost: parts.toolsCost } satisfies NextRequest
  }).pipe(Effect.withSpan("kern.context.nextRequest"))
