/**
 * Reading an AI SDK prompt from the model's side, for the models this service runs itself
 * (`builtin`, `local`): the user's request, the tool calls made so far with their results, and
 * tool call ids that stay unique within the conversation.
 */
import type { LanguageModelV4Content, LanguageModelV4Prompt } from '@ai-sdk/provider';

export type ToolEvent = { id: string; name: string; input: Record<string, unknown>; output: unknown };

/** The user's request: the text of the first user message (later ones are the service's feedback). */
export function requestText(prompt: LanguageModelV4Prompt) {
  const first = prompt.find((message) => message.role === 'user');
  if (first?.role !== 'user') return '';
  return first.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

/** The tool calls made so far with their results, in order. */
export function toolEvents(prompt: LanguageModelV4Prompt): ToolEvent[] {
  const inputs = new Map<string, { name: string; input: Record<string, unknown> }>();
  const events: ToolEvent[] = [];
  for (const message of prompt) {
    if (message.role === 'assistant') {
      for (const part of message.content) {
        if (part.type === 'tool-call') {
          inputs.set(part.toolCallId, {
            name: part.toolName,
            input: (typeof part.input === 'string' ? JSON.parse(part.input) : part.input) as Record<string, unknown>,
          });
        }
      }
    }
    if (message.role === 'tool') {
      for (const part of message.content) {
        if (part.type !== 'tool-result') continue;
        const known = inputs.get(part.toolCallId);
        const output = part.output.type === 'json' ? part.output.value : part.output.type === 'text' ? part.output.value : null;
        events.push({ id: part.toolCallId, name: known?.name ?? part.toolName, input: known?.input ?? {}, output });
      }
    }
  }
  return events;
}

/** Whether a tool call answered an error (the step did not happen). */
export const failed = (event: ToolEvent) =>
  Boolean(event.output && typeof event.output === 'object' && 'error' in (event.output as object));

/** Makes tool calls whose ids continue the conversation's own count, so they are unique within it. */
export function toolCaller(prompt: LanguageModelV4Prompt, prefix: string) {
  let count = prompt.flatMap((message) =>
    message.role === 'assistant' ? message.content.filter((part) => part.type === 'tool-call') : [],
  ).length;
  return (toolName: string, input: Record<string, unknown>): LanguageModelV4Content => ({
    type: 'tool-call',
    toolCallId: `${prefix}-${++count}`,
    toolName,
    input: JSON.stringify(input),
  });
}

export const tokenUsage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 },
});
