/**
 * The tools an analysis model may call, described once: the model sees these descriptions and
 * schemas, and the browser host (server/browsers/host/agentTools.ts) executes the calls in the
 * job's own tab. Every result is redacted before the model or anyone else sees it.
 */

/**
 * A JSON Schema. The model side (./model/conversation.ts) hands it to the AI SDK; this module loads no
 * AI SDK, since the browser host reads it too.
 */
type Schema = Record<string, unknown>;

const selector = { type: 'string', description: 'A selector from page_model or aria_snapshot.' } as const;

export const analysisToolSpecs = {
  page_model: {
    description:
      'The page model of the current page: forms with inputs and submit controls, buttons, links, navigation, pagination, tables, repeated lists, headings, each with a stable selector. Use only selectors it or aria_snapshot give.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  },
  aria_snapshot: {
    description: 'Playwright’s aria snapshot of the page (roles and accessible names), as YAML.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  },
  screenshot: {
    description:
      'A PNG screenshot of the viewport (password fields, and any field or text holding a secret of the prompt, hidden). Only for vision models.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    vision: true,
  },
  query_selector: {
    description: 'How many elements a selector matches, and the text of the first few.',
    inputSchema: { type: 'object', properties: { selector }, required: ['selector'], additionalProperties: false },
  },
  navigate: {
    description: 'Loads a URL in the analysis tab.',
    inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'], additionalProperties: false },
  },
  click: {
    description: 'Clicks an element in the analysis tab; waitForLoad when it loads a new page.',
    inputSchema: {
      type: 'object',
      properties: { selector, waitForLoad: { type: 'boolean' } },
      required: ['selector'],
      additionalProperties: false,
    },
  },
  scroll: {
    description:
      'Scrolls the page to the bottom and waits a moment for it to load more (infinite scroll); answers whether the page changed. Call page_model after it to see the listing as it is now.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  },
  walk_listing: {
    description:
      'Walks the listing of the current page to its end in one call, as its pagination says: follows the pager to each page not read yet, clicks the "more" button until it is gone or adds nothing, or scrolls until nothing more loads. Answers the paging an extraction step needs (null when the listing does not go on) and the listings of every page read.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  },
  select: {
    description:
      'Chooses an option of a <select> (by its value or its text) and waits for the page to stop changing: a dropdown that fills a list on its change event. Call page_model after it.',
    inputSchema: {
      type: 'object',
      properties: { selector, value: { type: 'string' } },
      required: ['selector', 'value'],
      additionalProperties: false,
    },
  },
  fill: {
    description: 'Types a value into an input. Write a parameter as {{name}} (secret values are only known by name).',
    inputSchema: {
      type: 'object',
      properties: { selector, value: { type: 'string' } },
      required: ['selector', 'value'],
      additionalProperties: false,
    },
  },
  press: {
    description: 'Presses a key (e.g. Enter) in an element; waitForLoad when it loads a new page.',
    inputSchema: {
      type: 'object',
      properties: { selector, key: { type: 'string' }, waitForLoad: { type: 'boolean' } },
      required: ['selector', 'key'],
      additionalProperties: false,
    },
  },
  pipeline_source: {
    description: 'The pipeline’s current source (JSON), which the proposal will replace.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  },
  node_catalog: {
    description: 'The pipeline language’s node types with their inputs and outputs.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  },
} satisfies Record<string, { description: string; inputSchema: Schema; vision?: boolean }>;

export type AnalysisToolName = keyof typeof analysisToolSpecs;
export const isAnalysisTool = (name: string): name is AnalysisToolName => Object.hasOwn(analysisToolSpecs, name);
