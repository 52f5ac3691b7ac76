/**
 * `local`: a small model running in this process (node-llama-cpp, CPU, a GGUF such as
 * SmolLM2-135M-Instruct), behind the AI SDK's model interface like every other model.
 *
 * A model this small cannot call tools or write a pipeline on its own. So it is given the page
 * model's candidates to choose from, and its answer is held to a JSON Schema grammar: at each
 * turn it picks numbered elements (inputs to fill with a prompt value, controls to click, the table
 * or list to extract), which become tool calls or the proposal. It explores and decides; the page
 * model and the proposal's shape come from the service. Analysis only: generation uses the
 * deterministic translation (`builtin`).
 *
 * On 2 cores, llama.cpp must not run more threads than cores (node-llama-cpp's CPU default is 4,
 * about 150 times slower here): `threads` is the machine's core count, at most 4.
 */
import os from 'node:os';
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4Content } from '@ai-sdk/provider';
import type { PageModel } from '../page/pageModel.ts';
import { readPromptValues } from '../promptValues.ts';
import type { Proposal, ProposalStep } from '../proposal.ts';
import { failed, requestText, type ToolEvent, tokenUsage, toolCaller, toolEvents } from './promptReading.ts';

type Candidate =
  | { kind: 'fill'; label: string; selector: string }
  | { kind: 'click'; label: string; selector: string }
  | { kind: 'extract'; label: string; step: ProposalStep };

type Runtime = {
  complete(prompt: string, schema: object): Promise<{ text: string; inputTokens: number; outputTokens: number }>;
};

const runtimes = new Map<string, Promise<Runtime>>();

/** One loaded model per file and process; each call gets a fresh context. */
function runtime(modelPath: string): Promise<Runtime> {
  let loading = runtimes.get(modelPath);
  if (!loading) {
    loading = (async () => {
      const { getLlama, LlamaCompletion } = await import('node-llama-cpp');
      const threads = Math.max(1, Math.min(4, os.availableParallelism()));
      const llama = await getLlama({ gpu: false, build: 'never', maxThreads: threads, logLevel: 'error' as never });
      const model = await llama.loadModel({ modelPath, gpuLayers: 0 });
      let queue = Promise.resolve();
      return {
        // One generation at a time: two at once on 2 cores would each take twice as long.
        complete(prompt, schema) {
          const run = queue.then(async () => {
            const context = await model.createContext({ contextSize: 4096, threads, sequences: 1 });
            try {
              const grammar = await llama.createGrammarForJsonSchema(schema as never);
              const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
              const text = await completion.generateCompletion(prompt, { grammar, temperature: 0, maxTokens: 400 });
              return { text, inputTokens: model.tokenize(prompt).length, outputTokens: model.tokenize(text).length };
            } finally {
              await context.dispose();
            }
          });
          queue = run.then(
            () => undefined,
            () => undefined,
          );
          return run;
        },
      } satisfies Runtime;
    })();
    runtimes.set(modelPath, loading);
    loading.catch(() => runtimes.delete(modelPath));
  }
  return loading;
}

/** The AI SDK model of a local GGUF, for analysis. */
export function localModel(modelPath: string, modelId: string): LanguageModelV4 {
  return {
    specificationVersion: 'v4',
    provider: 'local',
    modelId,
    supportedUrls: {},
    async doGenerate(options: LanguageModelV4CallOptions) {
      const events = toolEvents(options.prompt);
      const request = requestText(options.prompt);
      const pages = events.filter((event) => event.name === 'page_model').map((event) => event.output as PageModel);
      const current = pages[pages.length - 1];
      const call = toolCaller(options.prompt, 'local');
      if (!current) {
        // The first look at the page is not a decision: every analysis starts with it.
        return {
          content: [call('page_model', {})],
          finishReason: { unified: 'tool-calls', raw: undefined },
          usage: tokenUsage(0, 0),
          warnings: [],
        };
      }
      const used = new Set(
        events.filter((event) => event.name === 'fill' || event.name === 'click').map((event) => String(event.input.selector)),
      );
      const candidates = candidatesOf(current, used);
      if (candidates.length === 0) throw new Error('the page model offers nothing left to choose from');
      const values = readPromptValues(request, { placeholders: true }).values.map((value) => value.name);
      const prompt = planPrompt(request, candidates, values);
      const schema = choiceSchema(candidates.length, values);
      const { text, inputTokens, outputTokens } = await (await runtime(modelPath)).complete(prompt, schema);
      const plan = JSON.parse(text) as { steps: { candidate: string; value?: string }[] };
      const content = decide(plan, candidates, events, pages, call);
      return {
        content,
        finishReason: { unified: content.some((part) => part.type === 'tool-call') ? 'tool-calls' : 'stop', raw: undefined },
        usage: tokenUsage(inputTokens, outputTokens),
        warnings: [],
      };
    },
    async doStream() {
      throw new Error('the local model does not stream');
    },
  };
}

/**
 * What the model may pick on the page: what can be extracted first, then the inputs and controls
 * not used yet, then links with a name of their own (not one per list item).
 */
function candidatesOf(page: PageModel, used: ReadonlySet<string>): Candidate[] {
  const candidates: Candidate[] = [];
  const extracts: Candidate[] = [];
  for (const form of page.forms) {
    for (const input of form.inputs)
      candidates.push({ kind: 'fill', label: `${input.type} field '${input.label || input.name}'`, selector: input.selector });
    for (const submit of form.submit) candidates.push({ kind: 'click', label: `button '${submit.text}'`, selector: submit.selector });
  }
  const named = [...page.navigation.flatMap((nav) => nav.links), ...page.links].filter(
    (link) => link.selector.startsWith('role=') || link.selector.startsWith('#'),
  );
  for (const link of named.slice(0, 8)) candidates.push({ kind: 'click', label: `link '${link.text}'`, selector: link.selector });
  const pages = page.pagination ? { paging: { kind: page.pagination.kind, selector: page.pagination.selector } } : {};
  for (const table of page.tables) {
    extracts.push({
      kind: 'extract',
      label: `table '${table.caption ?? ''}' with columns ${table.headers.join(', ')}`,
      step: { action: 'extract_table', selector: table.selector, ...pages, evidence: `a table of ${table.rowCount} rows` },
    });
  }
  for (const list of page.lists) {
    extracts.push({
      kind: 'extract',
      label: `list of ${list.count} items with ${list.fields.map((field) => field.name).join(', ')}`,
      step: {
        action: 'extract_list',
        selector: list.itemSelector,
        fields: list.fields.map((field) => ({
          name: field.name,
          selector: field.selector,
          ...(field.attribute ? { attribute: field.attribute } : {}),
        })),
        ...pages,
        evidence: `${list.count} repeated items`,
      },
    });
  }
  return [...extracts, ...candidates.filter((candidate) => candidate.kind === 'extract' || !used.has(candidate.selector))].slice(0, 20);
}

function planPrompt(request: string, candidates: Candidate[], values: string[]) {
  const numbered = candidates.map((candidate, index) => `${index + 1}: ${candidate.kind} ${candidate.label}`).join('\n');
  return `You control a web browser. Choose the steps for the task, each using one candidate element by number.
fill types a value into a field, click presses a button or link, extract reads a table or list (the last step).

Example 1, a sign-in page.
Candidate elements:
1: fill text field 'Username'
2: fill password field 'Passcode'
3: click button 'Log in'
4: click link 'Help'
Values: user, pass
Task: log in as "{{user}}" with passcode "{{pass}}" and read the invoices
Plan: {"steps": [{"candidate": "1", "value": "user"}, {"candidate": "2", "value": "pass"}, {"candidate": "3"}]}

Example 2, the page after signing in.
Candidate elements:
1: extract table 'Invoices' with columns Number, Amount
2: click link 'Help'
Values: user, pass
Task: log in as "{{user}}" with passcode "{{pass}}" and read the invoices
Plan: {"steps": [{"candidate": "1"}]}

Now your turn.
Candidate elements:
${numbered}
Values: ${values.join(', ') || 'none'}
Task: ${request}
Plan: `;
}

function choiceSchema(count: number, values: string[]) {
  const step: Record<string, unknown> = {
    type: 'object',
    properties: {
      // Numbers as strings: the grammar of a string enum is exact, whatever the count.
      candidate: { enum: Array.from({ length: count }, (_, index) => String(index + 1)) },
      ...(values.length ? { value: { enum: values } } : {}),
    },
    required: ['candidate'],
  };
  return { type: 'object', properties: { steps: { type: 'array', minItems: 1, maxItems: 6, items: step } }, required: ['steps'] };
}

/** The model's choice as tool calls (act, then look again), or the proposal when it extracts. */
function decide(
  plan: { steps: { candidate: string; value?: string }[] },
  candidates: Candidate[],
  events: ToolEvent[],
  pages: PageModel[],
  call: ReturnType<typeof toolCaller>,
): LanguageModelV4Content[] {
  const calls: LanguageModelV4Content[] = [];
  const done = new Set(
    events.filter((event) => event.name === 'fill' || event.name === 'click').map((event) => String(event.input.selector)),
  );
  for (const choice of plan.steps) {
    const candidate = candidates[Number(choice.candidate) - 1];
    if (!candidate) continue;
    if (candidate.kind === 'extract') {
      if (calls.length) break; // act first, then look again before extracting
      return [{ type: 'text', text: JSON.stringify(proposal(events, pages, candidate.step)) }];
    }
    if (done.has(candidate.selector)) continue;
    if (candidate.kind === 'fill') {
      if (!choice.value) continue;
      calls.push(call('fill', { selector: candidate.selector, value: `{{${choice.value}}}` }));
    } else {
      calls.push(call('click', { selector: candidate.selector, waitForLoad: true }));
    }
    done.add(candidate.selector);
  }
  calls.push(call('page_model', {}));
  return calls;
}

function proposal(events: ToolEvent[], pages: PageModel[], extract: ProposalStep): Proposal {
  const steps: ProposalStep[] = [{ action: 'goto', url: pages[0]?.url ?? '', evidence: 'the page the analysis started on' }];
  for (const event of events) {
    const input = event.input as { selector?: string; value?: string; waitForLoad?: boolean };
    if (failed(event)) continue;
    if (event.name === 'fill')
      steps.push({ action: 'fill', selector: input.selector, value: input.value, evidence: 'chosen by the local model' });
    if (event.name === 'click')
      steps.push({ action: 'click', selector: input.selector, waitForLoad: input.waitForLoad, evidence: 'chosen by the local model' });
  }
  const used = new Set(steps.flatMap((step) => [...(step.value ?? '').matchAll(/\{\{([^}]+)\}\}/g)].map((match) => match[1] as string)));
  return {
    goal: 'as the prompt asks',
    startUrl: pages[0]?.url ?? '',
    steps: [...steps, { ...extract, output: 'records' }],
    parameters: [...used].map((name) => ({
      name,
      description: `the ${name} the prompt gave`,
      secret: /pass|secret|token|key|pin|otp/i.test(name),
    })),
    outputs: [{ name: 'records', description: extract.evidence }],
    risks: ['chosen by a small local model from the page model’s candidates'],
  };
}
