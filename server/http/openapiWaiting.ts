import type { OpenAPIObject } from 'trpc-to-openapi';

type Operation = {
  requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> };
  responses?: Record<string, { description?: string; content?: unknown; headers?: Record<string, unknown> } | undefined>;
};

/**
 * A start whose body takes `wait` (server/infra/waiting.ts) answers the running object with 202
 * when it does not end in time: each such operation documents 202 beside its 200, same body (and,
 * for a function's execute, the `location` of the execution's GET).
 */
export function withWaitingAnswers(document: OpenAPIObject): OpenAPIObject {
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const operation of Object.values(item ?? {}) as Operation[]) {
      const body = operation?.requestBody?.content?.['application/json']?.schema;
      const ok = operation?.responses?.['200'];
      if (!body?.properties?.wait || !ok || !operation.responses) continue;
      operation.responses['202'] = {
        description: 'Still going when `wait` ran out: the running object (its status says so); it goes on, and its GET shows the end',
        content: ok.content,
        // An execution is followed at its own GET, which the answer's body cannot name.
        ...(path.endsWith('/execute')
          ? {
              headers: {
                location: {
                  description: 'The execution’s GET: `/{project}/api/functions/{functionId}/runs/{runId}`',
                  schema: { type: 'string' },
                },
              },
            }
          : {}),
      };
    }
  }
  return document;
}
