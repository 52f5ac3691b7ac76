/**
 * What raw routes answer, as OpenAPI responses: the document says a page is HTML and a stream is
 * an event stream, so a client (and schemathesis' content-type check) knows what comes back.
 */

/** 200: an HTML page. */
export const htmlAnswer = (description = 'HTML') => ({
  '200': { description, content: { 'text/html': { schema: { type: 'string' as const } } } },
});

/** 200: a JSON document of any shape (`schema` narrows it). */
export const jsonAnswer = (description: string, schema: Record<string, unknown> = { type: 'object' }) => ({
  '200': { description, content: { 'application/json': { schema } } },
});
