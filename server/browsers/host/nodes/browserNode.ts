/**
 * What a browser or extract node's implementation is: it takes a live playwright-core Page and the
 * node's inputs, typed from its spec (server/pipelines/engine/nodes/browser.ts and extract.ts), and
 * answers its outputs, without the `page` output, which executeNode adds (the handle passes
 * through unchanged). They run on the browser's host, inside an activity.
 */
import type { Page } from 'playwright-core';
import type { NewLogEntry } from '../../../logs/logWriter.ts';
import type { InputsOf, NodeCategory, NodeTypeSpec, OutputsOf } from '../../../pipelines/engine/nodes/spec.ts';
import type { BrowserNodeType, NodeSpecOf } from '../../../pipelines/engine/registry.ts';

export type BrowserNodeContext = {
  /** Milliseconds the node may take in all. */
  timeoutMs: number;
  log: (entry: NewLogEntry) => void;
  /** The downloads of the run's browser (`page.download`), where the host keeps them. */
  downloads?: NodeDownloads;
};

/** What `page.download` asks of the run's browser (server/browsers/host/downloads/): its next file, from a page's frames. */
export type NodeDownloads = {
  expect(
    frameIds: ReadonlySet<string>,
    timeoutMs: number,
  ): { file: Promise<{ id: string; name: string; size: number; mimeType: string; url: string }>; cancel(): void };
};

/**
 * A browser node's implementation. executeNode hands it its inputs as checkNodeInputs
 * (server/pipelines/engine/nodeInputs.ts) answers them: types, enums, bounds and shapes checked
 * against the spec, defaults filled in, an optional input not given absent; `InputsOf` says so.
 */
export type BrowserNode<S extends NodeTypeSpec> = (page: Page, inputs: InputsOf<S>, ctx: BrowserNodeContext) => Promise<OutputsOf<S>>;

/** The node that opens a page has no page to act on: executeNode serves it (`spec.opensPage`). */
type PageOpeningType = Extract<NodeSpecOf<BrowserNodeType>, { opensPage: true }>['type'];

export type BrowserImplementations = { [T in Exclude<BrowserNodeType, PageOpeningType>]: BrowserNode<NodeSpecOf<T>> };

/** The node types of one category that the host implements (all but the one that opens a page). */
type HostNodeType<C extends NodeCategory> = Exclude<Extract<NodeSpecOf<BrowserNodeType>, { category: C }>['type'], PageOpeningType>;

/** The implementations of one category's nodes (./browser.ts, ./extract.ts): one per type of its specs. */
export type ImplementationsOf<C extends NodeCategory> = { [T in HostNodeType<C>]: BrowserNode<NodeSpecOf<T>> };
