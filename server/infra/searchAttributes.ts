import { TypedSearchAttributes } from '@temporalio/common';
// A default import: Node's ESM loader finds no named exports in this CommonJS module.
import proto from '@temporalio/proto';
import type { Logger } from 'pino';
import { searchAttributeKeys } from '../../workflows/contracts/searchAttributes.ts';

type OperatorService = {
  listSearchAttributes(request: { namespace: string }): Promise<{ customAttributes?: Record<string, unknown> | null }>;
  addSearchAttributes(request: {
    namespace: string;
    searchAttributes: Record<string, proto.temporal.api.enums.v1.IndexedValueType>;
  }): Promise<unknown>;
};

const keys = Object.values(searchAttributeKeys);

/** What an operator runs when the worker cannot register them itself. */
export function searchAttributeCommand(namespace: string) {
  const names = keys.map((key) => `--name ${key.name}`).join(' ');
  return `temporal operator search-attribute create --namespace ${namespace} ${names} --type Keyword`;
}

/**
 * Registers the service's search attributes (workflows/contracts/searchAttributes.ts) in
 * `namespace` when missing. Every workflow start carries them, and a namespace without them
 * refuses every start, so the control worker makes sure at start-up. Idempotent: a second worker
 * (or one racing it) finds them there. Where it may not (Temporal Cloud, a namespace without
 * operator rights), it logs what to run and the worker starts anyway.
 */
export async function ensureSearchAttributes(operator: OperatorService, namespace: string, log: Logger) {
  const keyword = proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  try {
    const { customAttributes } = await operator.listSearchAttributes({ namespace });
    const missing = keys.filter((key) => customAttributes?.[key.name] === undefined);
    if (!missing.length) return { registered: [] as string[] };
    await operator.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((key) => [key.name, keyword])),
    });
    log.info(`registered the Temporal search attributes ${missing.map((key) => key.name).join(', ')} in namespace ${namespace}`);
    return { registered: missing.map((key) => key.name) };
  } catch (error) {
    // Another worker may have added them between the list and the add.
    const present = await operator.listSearchAttributes({ namespace }).then(
      ({ customAttributes }) => keys.every((key) => customAttributes?.[key.name] !== undefined),
      () => false,
    );
    if (present) return { registered: [] as string[] };
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    log.error(
      `the Temporal search attributes ${keys.map((key) => `${key.name} (${TypedSearchAttributes.toMetadataType(key.type)})`).join(', ')} are not registered in namespace ${namespace} and could not be (${reason}): workflow starts fail until an operator runs: ${searchAttributeCommand(namespace)}`,
    );
    return { registered: [] as string[], failed: reason };
  }
}
