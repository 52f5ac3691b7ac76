import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id, updated } from './common.ts';
import { Project } from './Project.ts';

/**
 * Where a project wants to hear of its events (docs/webhooks.md): a URL, the events it wants and a
 * signing secret. The secret is sealed under the service secret (server/webhooks/secrets.ts); it is
 * answered once, when the endpoint is made, and opened only to sign a delivery.
 */
export const WebhookEndpoint = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  properties: {
    id: id(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    url: p.text(),
    description: p.string().length(500).nullable(),
    events: p.json<string[]>(),
    secret: p.text().hidden(),
    enabled: p.boolean().default(true),
    created: created(),
    updated: updated(),
  },
});

export type WebhookEndpoint = InferEntity<typeof WebhookEndpoint>;
