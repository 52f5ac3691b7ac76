import type { AnyRouter } from '@trpc/server';

/**
 * trpc-to-openapi turns on zod coercion for every number, boolean, bigint and date field of a
 * procedure's input on each request (`_def.coerce = true`), so that query strings parse. For JSON
 * bodies that is wrong: `{"public": "false"}` would coerce to `true` and make a project public,
 * `{"port": true}` would become 1. And the flag sticks on the shared schema, so the /trpc
 * endpoint would coerce as well. This pins `coerce` off for the fields of every procedure that
 * takes a body (POST, PUT, PATCH), leaving schemas built with `z.coerce` as they are. Query
 * procedures keep the adapter's coercion. Path parameters of body procedures are strings.
 */
export function keepBodyTypesStrict(router: AnyRouter) {
  for (const procedure of Object.values(router._def.procedures) as Procedure[]) {
    const method = procedure._def.meta?.openapi?.method;
    if (method !== 'POST' && method !== 'PUT' && method !== 'PATCH') continue;
    for (const input of procedure._def.inputs ?? []) pinObject(unwrap(input, true));
  }
}

type Procedure = { _def: { meta?: { openapi?: { method?: string } }; inputs?: unknown[] } };

type Schema = {
  _zod: { def: { type: string; coerce?: boolean; in?: Schema; out?: Schema; innerType?: Schema; element?: Schema; getter?: () => Schema } };
  shape?: Record<string, Schema>;
};

const coercible = new Set(['number', 'boolean', 'bigint', 'date']);

/** The same unwrapping the adapter does before it sets the flag, so we reach the same instances. */
function unwrap(value: unknown, throughPipes: boolean): Schema | undefined {
  const schema = value as Schema | undefined;
  const def = schema?._zod?.def;
  if (!def) return undefined;
  switch (def.type) {
    case 'array':
      return unwrap(def.element, throughPipes);
    case 'nullable':
    case 'optional':
    case 'default':
    case 'prefault':
      return unwrap(def.innerType, throughPipes);
    case 'lazy':
      return unwrap(def.getter?.(), throughPipes);
    case 'pipe':
      if (!throughPipes) return schema;
      return unwrap(def.out?._zod.def.type === 'transform' ? def.in : def.out, throughPipes);
    default:
      return schema;
  }
}

function pinObject(schema: Schema | undefined) {
  if (schema?._zod.def.type !== 'object' || !schema.shape) return;
  for (const field of Object.values(schema.shape)) {
    const inner = unwrap(field, false);
    if (!inner) continue;
    if (inner._zod.def.type === 'object') pinObject(inner);
    else if (coercible.has(inner._zod.def.type) && !inner._zod.def.coerce) {
      // A getter with a no-op setter: the adapter's assignment is ignored and does not throw.
      Object.defineProperty(inner._zod.def, 'coerce', { get: () => false, set: () => {}, configurable: true });
    }
  }
}
