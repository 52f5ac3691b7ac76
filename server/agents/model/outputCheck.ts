/**
 * What each output of a proposal must be, and whether a dry run's result is that. Pure.
 *
 * The declarations are computed by the service from the proposal's extract steps and the page
 * models the analysis saw, then merged with what the model declared: a model may promise more
 * (fields, a larger count) but never less than the pages showed. A generation's dry run is checked
 * against them (`checkOutputs`); what differs goes back to the model, then ends the job
 * `output_mismatch`. docs/analysis-generation.md, "Verified outputs".
 */
import { uniqueKeys } from '../../pipelines/cellValues.ts';
import type { PageModel } from '../page/pageModel.ts';
import type { OutputDeclaration, Proposal, ProposalStep } from '../proposal.ts';
import { attributesNotInResult } from './requestAttributes.ts';
import { asksForRecords } from './requestReading.ts';
import { kindMismatch } from './verification.ts';

/** One difference between a dry run's result and a declaration. */
export type OutputMismatch = {
  output: string;
  kind:
    | 'missing_output'
    | 'not_records'
    | 'empty_list'
    | 'too_few'
    | 'missing_field'
    | 'empty_field'
    | 'label_field'
    | 'empty_value'
    | 'wrong_kind'
    | 'missing_attribute';
  message: string;
};

/**
 * The steps as `sourceFromProposal` numbers them: a proposal that does not start with a goto gets
 * one first, so an unnamed output of step i is `result<i>` counted with it.
 */
function numberedSteps(proposal: Proposal): { step: ProposalStep; output: string }[] {
  const offset = proposal.steps[0]?.action === 'goto' ? 0 : 1;
  return proposal.steps.map((step, index) => ({ step, output: step.output ?? `result${index + offset}` }));
}

/** A page's address without its fragment: the same page read twice counts once. */
const pageOf = (url: string) => url.replace(/#.*$/, '');

/**
 * For each distinct page, the largest count `measure` finds there (a page may have been read
 * before and after it loaded more), summed over the pages; null when no page showed it.
 */
function countAcrossPages(models: readonly PageModel[], measure: (model: PageModel) => number | null): number | null {
  const largest = new Map<string, number>();
  for (const model of models) {
    const count = measure(model);
    if (count === null) continue;
    const page = pageOf(model.url);
    largest.set(page, Math.max(largest.get(page) ?? 0, count));
  }
  return largest.size ? [...largest.values()].reduce((sum, count) => sum + count, 0) : null;
}

/** The record keys `extract.table` gives a table with these headers, blank headers left out (they key empty columns). */
export function tableFields(headers: readonly string[]): string[] {
  return uniqueKeys([...headers], headers.length).filter((_key, index) => headers[index]?.trim());
}

/** What the page models say one extract step's output must be, or null for a step that extracts nothing. */
function declarationOf(step: ProposalStep, models: readonly PageModel[]): Omit<OutputDeclaration, 'name' | 'description'> | null {
  switch (step.action) {
    case 'extract_text':
      return { kind: 'value' };
    case 'extract_fields': {
      if (!step.pagesSelector) return { kind: 'value' };
      // One record per linked page: as many as the links the pages showed.
      const count = countAcrossPages(models, (model) => {
        const list = model.lists.find((candidate) => candidate.linkSelector === step.pagesSelector);
        if (list) return list.count;
        const table = model.tables.find((candidate) => candidate.linkSelector === step.pagesSelector);
        if (table) return table.rowCount;
        const links = model.links.filter((link) => link.selector === step.pagesSelector).length;
        return links || null;
      });
      return { kind: 'records', fields: (step.fields ?? []).map((field) => field.name), ...(count !== null ? { count } : {}) };
    }
    case 'extract_table': {
      const tables = models.flatMap((model) => model.tables.filter((table) => table.selector === step.selector));
      const widest = tables.reduce<string[]>((best, table) => (table.headers.length > best.length ? table.headers : best), []);
      const count = countAcrossPages(models, (model) => {
        const counts = model.tables.filter((table) => table.selector === step.selector).map((table) => table.rowCount);
        return counts.length ? Math.max(...counts) : null;
      });
      return { kind: 'records', fields: tableFields(widest), ...(count !== null ? { count } : {}) };
    }
    case 'extract_list': {
      const count = countAcrossPages(models, (model) => {
        const counts = model.lists
          .filter((list) => list.itemSelector === step.selector || list.selector === step.selector)
          .map((list) => list.count);
        return counts.length ? Math.max(...counts) : null;
      });
      return { kind: 'records', fields: (step.fields ?? []).map((field) => field.name), ...(count !== null ? { count } : {}) };
    }
    default:
      return null;
  }
}

/**
 * The completed declaration of every output: each extract step's, from the pages, merged with the
 * model's own (by name). The model's fields are added and its count wins when larger; its kind
 * counts only for an output no step extracts. Outputs the model declared without a step stay:
 * the dry run reports them missing.
 */
export function declarationsFor(proposal: Proposal, pageModelsSeen: readonly PageModel[]): OutputDeclaration[] {
  const declared = new Map(proposal.outputs.map((output) => [output.name, output]));
  const declarations: OutputDeclaration[] = [];
  const named = new Set<string>();
  for (const { step, output } of numberedSteps(proposal)) {
    const computed = declarationOf(step, pageModelsSeen);
    if (!computed || named.has(output)) continue;
    named.add(output);
    const own = declared.get(output);
    const fields = computed.kind === 'records' ? [...new Set([...(computed.fields ?? []), ...(own?.fields ?? [])])] : undefined;
    const counts = [computed.count, own?.count].filter((count): count is number => count !== undefined);
    declarations.push({
      name: output,
      description: own?.description ?? step.evidence.slice(0, 300),
      kind: computed.kind,
      ...(fields ? { fields } : {}),
      ...(computed.kind === 'records' && counts.length ? { count: Math.max(...counts) } : {}),
    });
  }
  for (const own of proposal.outputs) if (!named.has(own.name)) declarations.push(own);
  return declarations;
}

const isEmpty = (value: unknown) =>
  value === null ||
  value === undefined ||
  (typeof value === 'string' && value.trim() === '') ||
  (Array.isArray(value) && value.length === 0);

const shown = (value: unknown) => {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
};

/**
 * A field nothing on the page named (the page model's fallback `text`, `text_2`…) whose text is the
 * same in each of 3+ records: the label every item repeats ("Author") or a button's text ("Add to
 * cart") taken for a value. A value every record shares is named by its label or header instead.
 */
function labelField(field: string, records: (Record<string, unknown> | null)[]) {
  if (!/^text(?:_\d+)?$/.test(field) || records.length < 3) return false;
  const first = records[0]?.[field];
  return typeof first === 'string' && first.trim() !== '' && records.every((record) => record?.[field] === first);
}

/**
 * Every way `result` differs from the declarations, and from the kind of value `request` (the
 * analysis's prompt) names (verification.ts); empty when it is what was promised.
 */
export function checkOutputs(
  declarations: readonly OutputDeclaration[],
  result: Record<string, unknown> | null,
  request?: string,
): OutputMismatch[] {
  const mismatches: OutputMismatch[] = [];
  const wrongKind = request !== undefined && result ? kindMismatch(request, result) : null;
  if (wrongKind) mismatches.push({ output: declarations[0]?.name ?? 'result', kind: 'wrong_kind', message: wrongKind });
  // Every value the request names for each record is held by a field of some output.
  const declaredFields = Object.fromEntries(declarations.map((declaration) => [declaration.name, declaration.fields ?? []]));
  const absent = request !== undefined && result ? attributesNotInResult(request, result, declaredFields) : [];
  if (absent.length)
    mismatches.push({
      output: declarations[0]?.name ?? 'result',
      kind: 'missing_attribute',
      message: `the request asks for ${absent.map((words) => `'${words}'`).join(', ')} of each record, but no field of the result holds ${absent.length === 1 ? 'it' : 'them'}`,
    });
  const out = result ?? {};
  for (const declaration of declarations) {
    const { name } = declaration;
    const miss = (kind: OutputMismatch['kind'], message: string) => mismatches.push({ output: name, kind, message: `${name}: ${message}` });
    if (!(name in out)) {
      miss('missing_output', 'the result has no such output');
      continue;
    }
    const value = out[name];
    if (declaration.kind !== 'records') {
      if (declaration.kind === 'value' && isEmpty(value)) miss('empty_value', 'the value is empty');
      continue;
    }
    const seen = declaration.count !== undefined ? `; the analysis saw ${declaration.count} across the pages it visited` : '';
    if (!Array.isArray(value)) {
      miss('not_records', `a single value (${shown(value)}) where a list of records was declared${seen}`);
      continue;
    }
    if (value.length === 0) {
      miss('empty_list', `an empty list${seen}`);
      continue;
    }
    if (declaration.count !== undefined && value.length < declaration.count)
      miss('too_few', `${value.length} record(s) where the analysis saw ${declaration.count} across the pages it visited`);
    const records = value.map((item) =>
      item && typeof item === 'object' && !Array.isArray(item) ? (item as Record<string, unknown>) : null,
    );
    for (const field of declaration.fields ?? []) {
      if (!records.some((record) => record && field in record)) miss('missing_field', `no record has the field ${JSON.stringify(field)}`);
      else if (records.every((record) => !record || isEmpty(record[field])))
        miss('empty_field', `the field ${JSON.stringify(field)} is empty in every record`);
      else if (labelField(field, records))
        miss(
          'label_field',
          `the field ${JSON.stringify(field)} holds ${shown(records[0]?.[field])} in every record: a label or a button's text, not data`,
        );
    }
  }
  return mismatches;
}

/**
 * A proposal that answers a request for records with one value (a heading, a title) is refused:
 * the model must extract the records or say it could not find them.
 */
export function singleValueForRecords(proposal: Proposal, request: string): string | null {
  const extracts = proposal.steps.filter((step) => step.action.startsWith('extract_'));
  if (!extracts.length || !extracts.every((step) => step.action === 'extract_text')) return null;
  if (!asksForRecords(request)) return null;
  return 'the request asks for records (a list, a table, or every item), but the proposal extracts only a single value: extract the records with extract_table or extract_list (with paging when they go on over pages), or, when the pages do not hold them, answer {"goalNotFound": "why"}';
}

/** What the pages showed, as the `goal_not_found` message names it: their tables, lists and forms. */
export function pagesShowed(models: readonly PageModel[]): string {
  const parts: string[] = [];
  const said = new Set<string>();
  const say = (part: string) => {
    if (said.has(part)) return;
    said.add(part);
    parts.push(part);
  };
  for (const model of models) {
    for (const table of model.tables) {
      const headers = table.headers.filter((header) => header.trim()).join(', ');
      say(`a table${table.caption ? ` ${JSON.stringify(table.caption)}` : ''} (${headers || 'no headers'}; ${table.rowCount} rows)`);
    }
    for (const list of model.lists)
      say(`a list of ${list.count} items (${list.fields.map((field) => field.name).join(', ') || 'no fields'})`);
    for (const form of model.forms) {
      const inputs = form.inputs.map((input) => input.label || input.name || input.type).join(', ');
      say(`${form.purpose === 'other' ? 'a' : `a ${form.purpose}`} form (${inputs || 'no inputs'})`);
    }
  }
  return parts.length ? `the pages showed: ${parts.join(', ')}` : 'the pages showed no table, list or form';
}
