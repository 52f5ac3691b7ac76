/**
 * Type-level checks of the node registry, run by `npm run typecheck` (each `@ts-expect-error`
 * line must fail to compile, or the typecheck fails) and, trivially, by vitest.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { BrowserImplementations, BrowserNode } from '../../server/browsers/host/nodes/browserNode.ts';
import type { Paging } from '../../server/pipelines/engine/nodes/extract.ts';
import { defineNode, type InputsOf, nodeSpec, type PageHandle } from '../../server/pipelines/engine/nodes/spec.ts';
import type { BrowserNodeType, DataNodeType, FlowNodeType, NodeSpecOf, NodeType } from '../../server/pipelines/engine/registry.ts';

declare const implementations: BrowserImplementations;

describe('the node registry’s types', () => {
  it('derive the node types from the specs', () => {
    expectTypeOf<'page.goto' | 'extract.table'>().toExtend<BrowserNodeType>();
    expectTypeOf<FlowNodeType>().toEqualTypeOf<'flow.condition' | 'flow.forEach'>();
    expectTypeOf<DataNodeType>().toEqualTypeOf<'text.template' | 'json.pick' | 'list.flatten' | 'json.object'>();
    expectTypeOf<'no.such'>().not.toExtend<NodeType>();
  });

  it('type an implementation’s inputs from its spec', () => {
    expectTypeOf<InputsOf<NodeSpecOf<'page.goto'>>>().toEqualTypeOf<{
      page: PageHandle;
      url: string;
      waitUntil: 'load' | 'domcontentloaded' | 'networkidle' | 'commit';
    }>();
    expectTypeOf<InputsOf<NodeSpecOf<'page.wait'>>['ms']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<InputsOf<NodeSpecOf<'text.template'>>>().toExtend<{ template: string } & Record<string, unknown>>();
  });

  it('type an input by the shape its check guarantees (shapedCheck), past what its refType says', () => {
    expectTypeOf<InputsOf<NodeSpecOf<'extract.table'>>['headers']>().toEqualTypeOf<string[] | undefined>();
    expectTypeOf<InputsOf<NodeSpecOf<'extract.table'>>['types']>().toEqualTypeOf<
      Record<string, 'string' | 'number' | 'boolean'> | undefined
    >();
    expectTypeOf<InputsOf<NodeSpecOf<'extract.list'>>['pages']>().toEqualTypeOf<Paging | undefined>();
    expectTypeOf<InputsOf<NodeSpecOf<'page.select'>>['value']>().toEqualTypeOf<string | string[]>();
    expectTypeOf<InputsOf<NodeSpecOf<'page.cookies'>>['urls']>().toEqualTypeOf<string[] | undefined>();
  });

  it('refuse a table without an implementation, and an implementation reading an input its spec lacks', () => {
    expectTypeOf(typeChecks).toBeFunction();
  });
});

// Never called: these only have to compile, or fail to where marked.
function typeChecks() {
  // A table without one browser node's implementation does not compile.
  const { 'page.goto': _goto, ...withoutGoto } = implementations;
  // @ts-expect-error page.goto has no implementation
  const missing: BrowserImplementations = withoutGoto;

  // An implementation that reads an input its spec does not have does not compile (a renamed input is one).
  const goto: BrowserNode<NodeSpecOf<'page.goto'>> = async (_page, inputs) => ({
    // @ts-expect-error page.goto has no input `href`
    url: inputs.href,
    status: 0,
  });
  // Nor one that leaves out an output of its spec.
  // @ts-expect-error page.goto answers `status` too
  const partial: BrowserNode<NodeSpecOf<'page.goto'>> = async (_page, inputs) => ({ url: inputs.url });

  const upper = {
    type: 'text.upper',
    title: 'Upper case',
    description: 'The text in upper case.',
    category: 'data',
    browser: false,
    inputs: { text: { refType: 'string', required: true, description: 'Some text.' } },
    outputs: { text: { refType: 'string', description: 'The text, upper case.' } },
    example: {},
  } as const;
  const typed = defineNode(upper, (inputs) => ({ text: inputs.text.toUpperCase() }));
  const data = defineNode(
    upper,
    // @ts-expect-error the spec's input is `text`, not `value`
    (inputs) => ({ text: inputs.value.toUpperCase() }),
  );
  // A data node is never a spec alone: its implementation comes with it.
  // @ts-expect-error nodeSpec takes browser, extract and flow nodes only
  const specOnly = nodeSpec(upper);
  return [missing, goto, partial, data, typed, specOnly];
}
