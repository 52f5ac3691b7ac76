import { defineSearchAttributeKey, type SearchAttributePair, SearchAttributeType } from '@temporalio/common';

/**
 * The custom search attributes the service's workflows carry, so an operator finds a project's
 * browsers, runs and jobs in the Temporal UI (`ProjectId = "<id>"`; docs/architecture.md). All
 * Keyword: exact ids. A namespace must have them registered before a workflow can start with
 * them: the dev servers of `npm start` and the tests register them at start
 * (server/infra/devTemporal.ts), the control worker registers what is missing
 * (server/infra/searchAttributes.ts), an operator can with `temporal operator search-attribute create`.
 */
export const searchAttributeKeys = {
  projectId: defineSearchAttributeKey('ProjectId', SearchAttributeType.KEYWORD),
  sessionId: defineSearchAttributeKey('SessionId', SearchAttributeType.KEYWORD),
  pipelineId: defineSearchAttributeKey('PipelineId', SearchAttributeType.KEYWORD),
  /** Not `RunId`: Temporal reserves that name for an execution's own run id. */
  runId: defineSearchAttributeKey('PipelineRunId', SearchAttributeType.KEYWORD),
  hostId: defineSearchAttributeKey('HostId', SearchAttributeType.KEYWORD),
} as const;

export type WorkflowTags = { [name in keyof typeof searchAttributeKeys]?: string | null };

/** The search attributes of a workflow about these ids; ids not given (or null) are left out. */
export function searchAttributesOf(tags: WorkflowTags): SearchAttributePair[] {
  const pairs: SearchAttributePair[] = [];
  for (const [name, key] of Object.entries(searchAttributeKeys) as [keyof WorkflowTags, (typeof searchAttributeKeys)['projectId']][]) {
    const value = tags[name];
    if (value) pairs.push({ key, value });
  }
  return pairs;
}
