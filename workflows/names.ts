/** Workflow ids derive from database ids, so a retry or a double click cannot start two. */
export const workflowIds = {
  mail: (mailId: string) => `mail-${mailId}`,
  browser: (resourceId: string) => `browser-${resourceId}`,
  run: (runId: string) => `run-${runId}`,
};
