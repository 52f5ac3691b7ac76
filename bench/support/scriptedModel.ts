/**
 * A local OpenAI-compatible chat server whose answers are scripted by the `builtin` rules: a
 * "scripted good model". It lets the benchmark drive the model path end to end (HTTP, the AI SDK's
 * OpenAI-compatible provider, tool calls, structured output) without a cloud model. It keeps the
 * requests it received, so a run can check that no secret reached it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import { builtinModel } from '../../server/agents/model/builtin.ts';

type ChatMessage = {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | { type: string; text?: string }[] | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
};

function toPrompt(messages: ChatMessage[]): LanguageModelV4Prompt {
  const names = new Map<string, string>();
  const text = (content: ChatMessage['content']) =>
    typeof content === 'string' ? content : (content ?? []).map((part) => part.text ?? '').join('\n');
  return messages.map((message) => {
    if (message.role === 'system') return { role: 'system', content: text(message.content) };
    if (message.role === 'user') return { role: 'user', content: [{ type: 'text', text: text(message.content) }] };
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) names.set(call.id, call.function.name);
      return {
        role: 'assistant',
        content: [
          ...(message.content ? [{ type: 'text' as const, text: text(message.content) }] : []),
          ...(message.tool_calls ?? []).map((call) => ({
            type: 'tool-call' as const,
            toolCallId: call.id,
            toolName: call.function.name,
            input: call.function.arguments,
          })),
        ],
      };
    }
    const raw = text(message.content);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {}
    return {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: message.tool_call_id ?? '',
          toolName: names.get(message.tool_call_id ?? '') ?? '',
          output: { type: 'json', value: value as never },
        },
      ],
    };
  }) as LanguageModelV4Prompt;
}

export async function startScriptedGoodModel() {
  const received: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', async () => {
      received.push(body);
      const request = JSON.parse(body) as { messages: ChatMessage[]; tools?: unknown[] };
      const model = builtinModel(request.tools?.length ? 'analysis' : 'generation');
      const answer = await model.doGenerate({ prompt: toPrompt(request.messages) } as never);
      const calls = answer.content.flatMap((part) => (part.type === 'tool-call' ? [part] : []));
      const content = answer.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id: `cmpl-${received.length}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: 'scripted-good',
          choices: [
            {
              index: 0,
              message: calls.length
                ? {
                    role: 'assistant',
                    content: null,
                    tool_calls: calls.map((call) => ({
                      id: call.toolCallId,
                      type: 'function',
                      function: { name: call.toolName, arguments: call.input },
                    })),
                  }
                : { role: 'assistant', content },
              finish_reason: calls.length ? 'tool_calls' : 'stop',
            },
          ],
          usage: {
            prompt_tokens: answer.usage.inputTokens.total ?? 0,
            completion_tokens: answer.usage.outputTokens.total ?? 0,
            total_tokens: (answer.usage.inputTokens.total ?? 0) + (answer.usage.outputTokens.total ?? 0),
          },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
