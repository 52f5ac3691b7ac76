import { generateText, jsonSchema, Output } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { builtinModel, namedFormValues } from '../../server/agents/model/builtin.ts';
import { requestedNoun } from '../../server/agents/model/requestReading.ts';
import type { PageForm } from '../../server/agents/page/pageModel.ts';
import { fillPlaceholders, readPromptValues } from '../../server/agents/promptValues.ts';
import { checkProposal, type Proposal, proposalSchema, sourceFromProposal } from '../../server/agents/proposal.ts';
import { hideFieldValues } from '../../server/browsers/host/agentTools.ts';
import { compilePipeline } from '../../server/pipelines/compiler.ts';

describe('prompt values', () => {
  it('a quoted password becomes a sealed parameter the prompt names only as {{password}}', () => {
    const { prompt, values } = readPromptValues('log in with email "ada@example.com" and password "hunter2-x", then list the orders');
    expect(prompt).toBe('log in with email "ada@example.com" and password "{{password}}", then list the orders');
    expect(values).toEqual([
      { name: 'email', value: 'ada@example.com', secret: false },
      { name: 'password', value: 'hunter2-x', secret: true },
    ]);
  });

  it('names values by the nearest word before them, and numbers the rest', () => {
    const { values } = readPromptValues('search for "red", open "Garden" then "Tools", token "abc"');
    expect(values.map((value) => [value.name, value.secret])).toEqual([
      ['query', false],
      ['value2', false],
      ['value3', false],
      ['secret', true],
    ]);
  });

  it('a secret written any way is sealed, named by what it is, and hidden wherever it appears again', () => {
    const { prompt, values } = readPromptValues(
      "Open https://ada:pw-url-1@shop.test/login, log in with pwd 'pw-single-2', token: tok-3x and password: x. The password for the admin account is pw-far-4; use pw-use-5 as the password. Again: pw-far-4",
    );
    expect(prompt).toBe(
      "Open https://ada:{{password}}@shop.test/login, log in with pwd '{{password2}}', token: {{secret}} and password: {{password3}}. The password for the admin account is {{password4}}; use {{password5}} as the password. Again: {{password4}}",
    );
    expect(values).toEqual([
      { name: 'password', value: 'pw-url-1', secret: true },
      { name: 'password2', value: 'pw-single-2', secret: true },
      { name: 'secret', value: 'tok-3x', secret: true },
      { name: 'password3', value: 'x', secret: true },
      { name: 'password4', value: 'pw-far-4', secret: true },
      { name: 'password5', value: 'pw-use-5', secret: true },
    ]);
  });

  it('a quoted value that holds a secret is sealed whole; ordinary words about passwords stay', () => {
    const { prompt, values } = readPromptValues('search for "token abc123def", then click "Forgot password?" and "Reset password"');
    expect(prompt).toBe('search for "{{secret}}", then click "Forgot password?" and "Reset password"');
    expect(values.map((value) => [value.name, value.secret])).toEqual([
      ['secret', true],
      ['value2', false],
      ['value3', false],
    ]);
  });

  it('placeholders are filled only from the values given', () => {
    expect(fillPlaceholders('{{password}}-{{nope}}', { password: 'p' })).toBe('p-{{nope}}');
  });
});

describe('typed values', () => {
  it('an aria snapshot keeps the fields and drops what was typed into them', () => {
    const snapshot = '- textbox "E-mail": ada@example.com\n- textbox "Password": hunter2\n- searchbox "Search": kettle\n- button "Go"';
    expect(hideFieldValues(snapshot)).toBe(
      '- textbox "E-mail": [value hidden]\n- textbox "Password": [value hidden]\n- searchbox "Search": [value hidden]\n- button "Go"',
    );
  });
});

const proposal: Proposal = {
  goal: 'orders',
  startUrl: 'http://shop.test/login',
  steps: [
    { action: 'goto', url: 'http://shop.test/login', evidence: 'login' },
    { action: 'fill', selector: '#email', value: '{{email}}', evidence: 'field' },
    { action: 'fill', selector: '#password', value: '{{password}}', evidence: 'field' },
    { action: 'click', selector: 'role=button[name="Sign in"s]', waitForLoad: true, evidence: 'button' },
    { action: 'extract_table', selector: '#orders', pagesSelector: 'nav a', output: 'orders', evidence: 'table' },
    {
      action: 'extract_fields',
      selector: '#items a',
      pagesSelector: '#items a',
      fields: [{ name: 'name', selector: 'h1' }],
      output: 'details',
      evidence: 'pages',
    },
  ],
  parameters: [
    { name: 'email', description: 'e-mail', secret: false },
    { name: 'password', description: 'password', secret: true },
  ],
  outputs: [{ name: 'orders', description: 'all orders' }],
  risks: [],
};

describe('proposals', () => {
  it('a proposal becomes a source that compiles, secret parameters without defaults', () => {
    const source = sourceFromProposal(proposal, { email: 'ada@example.com' });
    const { errors } = compilePipeline(source);
    expect(errors).toEqual([]);
    expect(source.parameters).toEqual({
      email: { refType: 'string', description: 'e-mail', default: 'ada@example.com' },
      password: { refType: 'string', description: 'password', secret: true },
    });
    expect(Object.keys(source.outputs as object)).toEqual(['orders', 'details']);
  });

  it('a paged table or list becomes one extract node that reads every page; detail pages stay a loop', () => {
    const source = sourceFromProposal(proposal) as {
      nodes: Record<string, { type: string; inputs: Record<string, unknown>; timeoutMs?: number }>;
    };
    // `pagesSelector` on a table is the older way to say paging by links.
    expect(source.nodes.orders).toMatchObject({ type: 'extract.table', inputs: { selector: '#orders', pages: { links: 'nav a' } } });
    expect(source.nodes.orders?.timeoutMs).toBeGreaterThan(60_000);
    expect(Object.values(source.nodes).filter((node) => node.type === 'flow.forEach')).toHaveLength(1);
    const list = (paging: Proposal['steps'][number]['paging']) =>
      (
        sourceFromProposal({
          ...proposal,
          steps: [
            { action: 'goto', url: 'http://shop.test/', evidence: 'start' },
            {
              action: 'extract_list',
              selector: '#items > li',
              fields: [{ name: 'title', selector: 'h3' }],
              paging,
              output: 'items',
              evidence: 'list',
            },
          ],
        }) as { nodes: Record<string, { inputs: Record<string, unknown> }> }
      ).nodes.items?.inputs.pages;
    expect(list({ kind: 'more', selector: '#more' })).toEqual({ more: '#more' });
    expect(list({ kind: 'scroll' })).toEqual({ scroll: true });
    expect(list({ kind: 'links', selector: 'a[rel~=next]' })).toEqual({ links: 'a[rel~=next]' });
    expect(list(undefined)).toBeUndefined();
    for (const paging of [{ kind: 'more', selector: '#more' }, { kind: 'scroll' }] as const)
      expect(
        compilePipeline(
          sourceFromProposal({
            ...proposal,
            steps: [
              { action: 'extract_list', selector: 'li', fields: [{ name: 't', selector: 'b' }], paging, output: 'items', evidence: 'x' },
            ],
          }),
        ).errors,
      ).toEqual([]);
  });

  it('a selector no page model showed is refused, with a sentence the model can act on', () => {
    const known = new Set(['#email', '#password', 'role=button[name="Sign in"s]', '#orders', 'nav a', '#items a']);
    expect(checkProposal(proposal, known)).toEqual([
      'step 6 (extract_fields): the field selector "h1" is not in any page model you were shown; use one from page_model',
    ]);
    expect(checkProposal({ ...proposal, steps: proposal.steps.slice(0, 2) }, known)).toEqual(['no step extracts anything']);
  });
});

describe('models through the AI SDK', () => {
  it('builtin answers a tool call first, then a proposal the schema accepts', async () => {
    const first = await generateText({
      model: builtinModel('analysis'),
      prompt: 'Open http://shop.test/ and list the results',
      tools: { page_model: { description: 'the page model', inputSchema: jsonSchema({ type: 'object', properties: {} }) } },
    });
    expect(first.toolCalls.map((call) => call.toolName)).toEqual(['page_model']);
  });

  it('structured output is validated against the schema (a mock model)', async () => {
    const model = new MockLanguageModelV4({
      doGenerate: async () => ({
        content: [{ type: 'text', text: JSON.stringify(proposal) }],
        finishReason: { unified: 'stop', raw: undefined },
        usage: {
          inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 5, text: 5, reasoning: 0 },
        },
        warnings: [],
      }),
    });
    const result = await generateText({ model, prompt: 'x', output: Output.object({ schema: proposalSchema }) });
    expect(result.output.goal).toBe('orders');
    expect(result.usage.inputTokens).toBe(10);
    expect(z.toJSONSchema(proposalSchema)).toMatchObject({ type: 'object' });
  });
});

describe('prompts written the ways users write them', () => {
  it('a secret in each phrasing is sealed in the stored prompt', () => {
    const cases: [string, string, string][] = [
      ['log in with password hunter2zz and list orders', 'hunter2zz', 'log in with password {{password}} and list orders'],
      ['user ada pw: Xq7-zz', 'Xq7-zz', 'user ada pw: {{password}}'],
      ["log in as 'ada' with the password 'pass-w0rd-9'", 'pass-w0rd-9', "log in as 'ada' with the password '{{password}}'"],
      ['use token abc123def456ghi then list', 'abc123def456ghi', 'use token {{secret}} then list'],
      // A secret that holds a secret's name (`-pw`): the word after it is no second secret.
      ["user 'ada' pwd 'Hunter2-pw' orders", 'Hunter2-pw', "user 'ada' pwd '{{password}}' orders"],
    ];
    for (const [prompt, secret, shown] of cases) {
      const read = readPromptValues(prompt);
      expect(read.prompt, prompt).toBe(shown);
      expect(read.values.find((value) => value.value === secret)?.secret, prompt).toBe(true);
    }
  });

  it('unquoted e-mail addresses and user names become values; apostrophes and addresses in URLs do not', () => {
    expect(readPromptValues('log in as ada@example.com with password hunter2zz').values).toEqual([
      { name: 'email', value: 'ada@example.com', secret: false },
      { name: 'password', value: 'hunter2zz', secret: true },
    ]);
    expect(readPromptValues("sign in as grace, then read the shop's orders and Ada's list").values).toEqual([
      { name: 'username', value: 'grace', secret: false },
    ]);
    expect(readPromptValues('Open https://ada:pw-url-1@shop.test/login and log in with the email field').values).toEqual([
      { name: 'password', value: 'pw-url-1', secret: true },
    ]);
    expect(readPromptValues('search for red kettles, and list the results').values).toEqual([
      { name: 'query', value: 'red kettles', secret: false },
    ]);
  });

  it('a stored prompt read again knows its sealed values by their placeholders; a user’s own prompt does not', () => {
    const stored = 'log in as ada with password {{password}} and list the orders';
    expect(readPromptValues(stored, { placeholders: true }).values).toEqual([
      { name: 'username', value: 'ada', secret: false },
      { name: 'password', value: '{{password}}', secret: true },
    ]);
    expect(readPromptValues(stored).values).toEqual([{ name: 'username', value: 'ada', secret: false }]);
    // Quoted, and after a word that names no value (`pwd`): the placeholder's own name, still a secret.
    const quoted = readPromptValues("http://club.test/login user 'grace' pwd 'Zx-9981-q' events");
    expect(quoted.prompt).toBe("http://club.test/login user 'grace' pwd '{{password}}' events");
    expect(readPromptValues(quoted.prompt, { placeholders: true }).values).toEqual([
      { name: 'username', value: 'grace', secret: false },
      { name: 'password', value: '{{password}}', secret: true },
    ]);
  });

  it('a hurried search keyword is read after a bare `search`, `find` or `look for`, never from an address', () => {
    const query = (prompt: string) => readPromptValues(prompt).values.filter((value) => value.name === 'query');
    expect(query('search red on http://shop.test/search and gimme the results')).toEqual([{ name: 'query', value: 'red', secret: false }]);
    expect(query('http://shop.test/parts search valve, table of results pls')).toEqual([{ name: 'query', value: 'valve', secret: false }]);
    // `find dune books`: the keyword, then what is asked for.
    expect(query('http://shop.test/lookup find dune books')).toEqual([{ name: 'query', value: 'dune', secret: false }]);
    expect(query('http://shop.test/ look for blue mugs')).toEqual([{ name: 'query', value: 'blue', secret: false }]);
    // Words that are no keyword, and an address's own /search or /find.
    expect(query('http://shop.test/recipes search with nothing typed, all recipes')).toEqual([]);
    expect(query('run the search with the search box left empty')).toEqual([]);
    expect(query('find all the orders')).toEqual([]);
    expect(query('http://shop.test/search then list it')).toEqual([]);
    expect(query('http://shop.test/find orders pls')).toEqual([]);
  });

  it('the output is named from the prompt’s noun, hurried phrasings too', () => {
    const cases: [string, string | undefined][] = [
      ['Open http://shop.test/ and get me all orders', 'orders'],
      ['http://shop.test/ orders pls', 'orders'],
      ['every story on the news page', 'stories'],
      ['Open http://shop.test/catalog and read the details of each product', 'products'],
      ['Open http://shop.test/report and extract the returns table', 'returns'],
      ['Open http://shop.test/team and list the team members', 'members'],
      ['Open http://shop.test/search and show all results of the search form', 'results'],
      ['Open http://shop.test/ and take a screenshot', undefined],
      // An aside says how the page works; "em" and "it" name nothing; "show more" is a button.
      ['http://shop.test/deals every deal (theres a load more btn at the bottom)', 'deals'],
      ['grab http://shop.test/news, all headlines (it loads more as u scroll)', 'headlines'],
      ['http://shop.test/recipes recipes, all of em', 'recipes'],
      ['http://shop.test/tips each tip, theres a show more button', 'tips'],
      // No verb, no plural: the bare noun phrase, named for what its list holds.
      ['http://shop.test/directory staff phone list', 'staff'],
      ['http://shop.test/ price table', 'price'],
      ['http://shop.test/ take a screenshot', undefined],
      // Prompts that name no listing, and a container's modifier that is not what is asked.
      ['Just open http://shop.test/catalog', undefined],
      ['Quickly visit http://shop.test/news', undefined],
      ['Screenshot http://shop.test/', undefined],
      ['get the top stories list', 'stories'],
      ['scrape the product reviews list', 'reviews'],
    ];
    for (const [request, name] of cases) expect(requestedNoun(request)?.name, request).toBe(name);
  });
});

describe('a form filled from the words of the request', () => {
  const form: PageForm = {
    selector: 'form',
    purpose: 'search',
    inputs: [
      { selector: '#postcode', label: 'Your postcode', type: 'text', name: 'postcode', required: false, filled: false },
      {
        selector: '#trade',
        label: 'Trade',
        type: 'select',
        name: 'trade',
        required: false,
        filled: false,
        options: [
          { value: '', text: 'Choose…' },
          { value: 'plumber', text: 'Plumbers' },
          { value: 'roofer', text: 'Roofers' },
        ],
      },
    ],
    submit: [{ selector: 'form button', text: 'Find' }],
  };

  it('an option the request names, and a code or number written after a field’s label', () => {
    expect(namedFormValues('find roofers near the postcode SW1A 1AA and list their phones', form, [])).toEqual([
      { kind: 'fill', selector: '#postcode', value: 'SW1A 1AA' },
      { kind: 'select', selector: '#trade', value: 'roofer' },
    ]);
    expect(namedFormValues("plumbers, postcode: 'M1 2AB'", form, [])).toEqual([
      { kind: 'fill', selector: '#postcode', value: 'M1 2AB' },
      { kind: 'select', selector: '#trade', value: 'plumber' },
    ]);
  });

  it('never ordinary words after the label, nor an option the request does not name', () => {
    expect(namedFormValues('list the tradespeople near my postcode please', form, [])).toEqual([]);
  });
});
