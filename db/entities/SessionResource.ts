import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BrowserSession } from './BrowserSession.ts';
import { created, id, updated } from './common.ts';
import { Project } from './Project.ts';

export const resourceStatuses = ['starting', 'running', 'stopping', 'stopped', 'failed'] as const;
/**
 * Why a resource was stopped, when that is a fact code acts on rather than text for people:
 * `host_shutdown`, its host stopped it because the host was shut down (server/browsers/host/browserHost.ts).
 */
export const resourceStopCauses = ['host_shutdown'] as const;

/** A started browser (spec "Session resource"). Its `browserSession` workflow owns its life. */
export const SessionResource = defineEntity({
  name: 'SessionResource',
  tableName: 'session_resources',
  properties: {
    id: id(),
    session: () => p.manyToOne(BrowserSession).deleteRule('cascade').index(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    status: p.enum(resourceStatuses).default('starting'),
    /** The browser host that runs it, and the browser's CDP endpoint there (never shown). */
    hostId: p.string().length(100).nullable(),
    cdpEndpoint: p.string().length(500).nullable().hidden(),
    pid: p.integer().nullable(),
    /**
     * A browser running elsewhere, registered by its CDP URL (PUT /api/external-session): its host
     * connects to it instead of launching one, and disconnects (never kills it) at the stop.
     */
    externalCdpUrl: p.string().length(1000).nullable().hidden(),
    warm: p.boolean().default(false),
    startedAt: p.datetime().nullable(),
    stoppedAt: p.datetime().nullable(),
    stopReason: p.string().length(300).nullable(),
    /** Set with a stop whose cause code acts on (`resourceStopCauses`); the stop reason says it in words. */
    stopCause: p.enum(resourceStopCauses).nullable(),
    /** Latest usage figures from the host: CPU seconds, memory, network bytes. */
    usage: p.json<{ cpuSeconds: number; memoryBytes: number; networkBytes: number }>().nullable(),
    lastActivity: p.datetime().nullable(),
    created: created(),
    updated: updated(),
  },
});

export type SessionResource = InferEntity<typeof SessionResource>;
