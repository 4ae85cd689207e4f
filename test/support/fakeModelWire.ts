// Wire payloads the fake model server sends: OpenAI Responses (objects and SSE events in the shapes
// @effect/ai-openai 0.41 decodes), Chat Completions (objects and chunks), Anthropic Messages (objects and SSE events
// in the shapes @effect/ai-anthropic 0.27 decodes), Embeddings.

export interface FakeToolCall {
  readonly id: string
  readonly name: string
  /** Serialized with JSON.stringify unless already a string (send a string to script broken JSON). */
  readonly args: unknown
}

export interface FakeUsage {
  /** Every prompt token, those read from and written to the prompt cache included. */
  readonly input: number
  readonly output: number
  /** Prompt tokens read from the cache. */
  readonly cached: number
  /** Prompt tokens written to the cache; reported only when given. */
  readonly cacheWrite?: number | undefined
}

/** What one scripted model round says. */
export interface FakeTurn {
  readonly text: string
  readonly toolCalls: ReadonlyArray<FakeToolCall>
  readonly usage: FakeUsage
}

const created = 1_700_000_000

export const argsText = (call: FakeToolCall): string =>
  typeof call.args === "string" ? call.args : JSON.stringify(call.args)

/** Splits text into up to `n` pieces so streams carry several deltas. */
export const pieces = (text: string, n = 3): Array<string> => {
  if (text.length === 0) return []
  const size = Math.max(1, Math.ceil(text.length / n))
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

export const sseFrame = (data: unknown, event?: string): string =>
  `${event === undefined ? "" : `event: ${event}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`

// ---- Responses API ------------------------------------------------------------------------------

const responsesUsage = (usage: FakeUsage) => ({
  input_tokens: usage.input,
  input_tokens_details: { cached_tokens: usage.cached },
  output_tokens: usage.output,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: usage.input + usage.output
})

const responseObject = (
  id: string,
  model: string,
  status: "in_progress" | "completed",
  output: ReadonlyArray<unknown>,
  usage?: FakeUsage
) => ({
  id,
  object: "response",
  created_at: created,
  status,
  error: null,
  incomplete_details: null,
  instructions: null,
  output,
  parallel_tool_calls: true,
  model,
  tools: [],
  tool_choice: "auto",
  metadata: null,
  temperature: null,
  top_p: null,
  ...(usage === undefined ? {} : { usage: responsesUsage(usage) })
})

const messageItem = (id: string, text: string, status: "in_progress" | "completed") => ({
  id,
  type: "message",
  role: "assistant",
  status,
  content: status === "completed" ? [{ type: "output_text", text, annotations: [] }] : []
})

const functionItem = (call: FakeToolCall, index: number, status: "in_progress" | "completed") => ({
  id: `fc_${index}`,
  type: "function_call",
  call_id: call.id,
  name: call.name,
  arguments: status === "completed" ? argsText(call) : "",
  status
})

const responsesOutput = (turn: FakeTurn) => [
  ...(turn.text === "" ? [] : [messageItem("msg_0", turn.text, "completed")]),
  ...turn.toolCalls.map((call, i) => functionItem(call, i, "completed"))
]

export const responsesBody = (id: string, model: string, turn: FakeTurn) =>
  responseObject(id, model, "completed", responsesOutput(turn), turn.usage)

export const responsesEvents = (id: string, model: string, turn: FakeTurn): Array<string> => {
  let sequence = 0
  const frames: Array<string> = []
  const emit = (type: string, fields: Record<string, unknown>) =>
    frames.push(sseFrame({ type, sequence_number: sequence++, ...fields }, type))
  emit("response.created", { response: responseObject(id, model, "in_progress", []) })
  let outputIndex = 0
  if (turn.text !== "") {
    const output_index = outputIndex++
    const item_id = "msg_0"
    const part = { type: "output_text", text: "", annotations: [] }
    emit("response.output_item.added", { output_index, item: messageItem(item_id, "", "in_progress") })
    emit("response.content_part.added", { output_index, content_index: 0, item_id, part })
    for (const delta of pieces(turn.text)) {
      emit("response.output_text.delta", { output_index, content_index: 0, item_id, delta, logprobs: [] })
    }
    emit("response.output_text.done", { output_index, content_index: 0, item_id, text: turn.text, logprobs: [] })
    emit("response.content_part.done", {
      output_index,
      content_index: 0,
      item_id,
      part: { ...part, text: turn.text }
    })
    emit("response.output_item.done", { output_index, item: messageItem(item_id, turn.text, "completed") })
  }
  turn.toolCalls.forEach((call, i) => {
    const output_index = outputIndex++
    const item_id = `fc_${i}`
    emit("response.output_item.added", { output_index, item: functionItem(call, i, "in_progress") })
    for (const delta of pieces(argsText(call))) {
      emit("response.function_call_arguments.delta", { output_index, item_id, delta })
    }
    emit("response.function_call_arguments.done", { output_index, item_id, arguments: argsText(call) })
    emit("response.output_item.done", { output_index, item: functionItem(call, i, "completed") })
  })
  emit("response.completed", { response: responsesBody(id, model, turn) })
  return frames
}

// ---- Chat Completions ---------------------------------------------------------------------------

const chatUsage = (usage: FakeUsage) => ({
  prompt_tokens: usage.input,
  completion_tokens: usage.output,
  total_tokens: usage.input + usage.output,
  // OpenRouter's usage accounting names cache writes `cache_write_tokens`.
  prompt_tokens_details: usage.cacheWrite === undefined
    ? { cached_tokens: usage.cached }
    : { cached_tokens: usage.cached, cache_write_tokens: usage.cacheWrite }
})

const chatFinish = (turn: FakeTurn) => (turn.toolCalls.length > 0 ? "tool_calls" : "stop")

export const chatBody = (id: string, model: string, turn: FakeTurn) => ({
  id,
  object: "chat.completion",
  created,
  model,
  choices: [{
    index: 0,
    message: {
      role: "assistant",
      content: turn.text === "" && turn.toolCalls.length > 0 ? null : turn.text,
      ...(turn.toolCalls.length === 0 ? {} : {
        tool_calls: turn.toolCalls.map((call) => ({
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: argsText(call) }
        }))
      })
    },
    finish_reason: chatFinish(turn)
  }],
  usage: chatUsage(turn.usage)
})

export const chatEvents = (id: string, model: string, turn: FakeTurn, includeUsage: boolean): Array<string> => {
  const chunk = (choices: ReadonlyArray<unknown>, extra: Record<string, unknown> = {}) =>
    sseFrame({ id, object: "chat.completion.chunk", created, model, choices, ...extra })
  const delta = (fields: Record<string, unknown>, finish_reason: string | null = null) =>
    chunk([{ index: 0, delta: fields, finish_reason }])
  const frames = [delta({ role: "assistant", content: "" })]
  for (const piece of pieces(turn.text)) frames.push(delta({ content: piece }))
  turn.toolCalls.forEach((call, index) => {
    frames.push(delta({
      tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }]
    }))
    for (const piece of pieces(argsText(call))) {
      frames.push(delta({ tool_calls: [{ index, function: { arguments: piece } }] }))
    }
  })
  frames.push(delta({}, chatFinish(turn)))
  if (includeUsage) frames.push(chunk([], { usage: chatUsage(turn.usage) }))
  frames.push(sseFrame("[DONE]"))
  return frames
}

// ---- Anthropic Messages --------------------------------------------------------------------------

/** Anthropic's `input_tokens` leaves out the tokens read from and written to the cache: they have fields of their own. */
const messagesUsage = (usage: FakeUsage, output: number) => ({
  input_tokens: Math.max(0, usage.input - usage.cached - (usage.cacheWrite ?? 0)),
  cache_creation_input_tokens: usage.cacheWrite ?? 0,
  cache_read_input_tokens: usage.cached,
  output_tokens: output
})

const messagesStop = (turn: FakeTurn) => (turn.toolCalls.length > 0 ? "tool_use" : "end_turn")

/** Tool input as Anthropic sends it: an object (text that is not one is sent as it is, streamed, never whole). */
const toolInput = (call: FakeToolCall): Record<string, unknown> => {
  const input: unknown = typeof call.args === "string" ? {} : call.args
  return typeof input === "object" && input !== null && !Array.isArray(input) ? Object.fromEntries(Object.entries(input)) : {}
}

const messagesContent = (turn: FakeTurn) => [
  ...(turn.text === "" ? [] : [{ type: "text", text: turn.text, citations: null }]),
  ...turn.toolCalls.map((call) => ({ type: "tool_use", id: call.id, name: call.name, input: toolInput(call) }))
]

export const messagesBody = (id: string, model: string, turn: FakeTurn) => ({
  id,
  type: "message",
  role: "assistant",
  content: messagesContent(turn),
  model,
  stop_reason: messagesStop(turn),
  stop_sequence: null,
  usage: messagesUsage(turn.usage, turn.usage.output)
})

export const messagesEvents = (id: string, model: string, turn: FakeTurn): Array<string> => {
  const frames: Array<string> = []
  const emit = (type: string, fields: Record<string, unknown>) => frames.push(sseFrame({ type, ...fields }, type))
  emit("message_start", {
    message: {
      id,
      type: "message",
      role: "assistant",
      content: [],
      model,
      stop_reason: null,
      stop_sequence: null,
      usage: messagesUsage(turn.usage, 1)
    }
  })
  let index = 0
  if (turn.text !== "") {
    emit("content_block_start", { index, content_block: { type: "text", text: "", citations: null } })
    emit("ping", {})
    for (const text of pieces(turn.text)) emit("content_block_delta", { index, delta: { type: "text_delta", text } })
    emit("content_block_stop", { index })
    index++
  }
  for (const call of turn.toolCalls) {
    emit("content_block_start", { index, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } })
    for (const partial_json of pieces(argsText(call))) {
      emit("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } })
    }
    emit("content_block_stop", { index })
    index++
  }
  emit("message_delta", {
    delta: { stop_reason: messagesStop(turn), stop_sequence: null },
    usage: { output_tokens: turn.usage.output }
  })
  emit("message_stop", {})
  return frames
}

// ---- Embeddings ---------------------------------------------------------------------------------

/** A deterministic unit vector for a text: equal texts embed equally, different texts differently. */
export const fakeEmbedding = (text: string, dimensions: number): Array<number> => {
  let hash = 2166136261
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619) >>> 0
  const raw = Array.from({ length: dimensions }, (_, i) => Math.sin(hash + (i + 1) * 1.618))
  const norm = Math.sqrt(raw.reduce((sum, x) => sum + x * x, 0)) || 1
  return raw.map((x) => x / norm)
}

export const embeddingsBody = (model: string, inputs: ReadonlyArray<string>, dimensions: number) => ({
  object: "list",
  model,
  data: inputs.map((input, index) => ({ object: "embedding", index, embedding: fakeEmbedding(input, dimensions) })),
  usage: {
    prompt_tokens: inputs.reduce((n, s) => n + Math.ceil(s.length / 4), 0),
    total_tokens: inputs.reduce((n, s) => n + Math.ceil(s.length / 4), 0)
  }
})
