/**
 * # The second held-out set of the analysis benchmark
 *
 * Written on 2026-12-07 (branch r38h) by a helper that never opened `server/agents/` nor the
 * discussion of outcomes in docs/benchmarks/analysis.md: only the harness (bench/analysis.ts), the
 * `Shape` type, and the first held-out set's files for their format. The page designs are new: none
 * copies a tuned page (bench/support/shapes.ts) or a page of the first held-out set
 * (bench/support/heldoutShapes.ts), whose outcomes are known and so as good as tuned.
 *
 * - `BENCH_SET=heldout2 npm run bench:analysis` scores it and writes the "Held-out set 2" section of
 *   docs/benchmarks/analysis.md; the other sections are left as they are.
 * - **Do not tune to it.** It is scored once, by the integrator, at the end of a change to the
 *   proposer; once scored it is as good as tuned, and the next change needs a new set.
 * - 20 shapes, **two prompts each** (40 prompts per model): one written with care, one as a hurried
 *   user types it.
 * - 17 shapes hold what is asked: plan cards whose yearly prices show only after the billing switch,
 *   a job board filtered by team and "remote", a changelog whose fixes belong to the version heading
 *   above them, an FAQ of `<details>`, a product whose colours each change price and stock, a forum
 *   thread with nested replies, a league table under a cloned sticky header, a property grid paged by
 *   "Next →" links, a statement split by month rows, exchange rates fetched after a delay, recipes
 *   behind a cookie dialog that blocks the "Show all" button, a catalogue search whose results are on
 *   a new address, an e-mail sign-in before a dashboard, one person's profile as a definition list (a
 *   single record), tickets paged by icon-only buttons and "Page 1 of 5", a comparison table whose
 *   columns are the items, and a menu whose tabs each replace the one panel.
 * - 3 shapes do not hold what is asked, while something that looks like it is there: gate numbers on
 *   an arrivals board (it has baggage belts), calories on a recipe (it has quantities), speakers'
 *   social handles (it has their companies and talks). The right outcome there is a loud end.
 * - Expected records are the values as the page shows them, each in its own element, in page order;
 *   a record holds exactly what the prompts ask for.
 *
 * `node bench/support/checkHeldout2Pages.ts` checks the pages themselves (no analysis, no scoring).
 */

import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SECRET, type Shape } from './shapes.ts';
import { BENCH_PAGE_HOST } from './stack.ts';

// 1. Plan cards; the page opens on monthly prices, the prompts ask for the yearly ones.
const pricingPlans: [name: string, monthly: string, yearly: string, seats: string][] = [
  ['Free', '$0', '$0', '1 user'],
  ['Solo', '$12', '$120', '1 user'],
  ['Team', '$39', '$390', 'Up to 10 users'],
  ['Business', '$99', '$990', 'Up to 50 users'],
];
// 2. A job board with filters; the prompts ask for remote engineering roles only.
const openings: [title: string, team: string, location: string, salary: string][] = [
  ['Senior backend engineer', 'Engineering', 'Remote, UK', '£75,000 – £90,000'],
  ['Product designer', 'Design', 'Hybrid, London', '£55,000 – £65,000'],
  ['Frontend engineer', 'Engineering', 'Manchester', '£50,000 – £62,000'],
  ['Site reliability engineer', 'Engineering', 'Remote, EU', '€70,000 – €85,000'],
  ['Account executive', 'Sales', 'Hybrid, London', '£45,000 + commission'],
  ['Customer support specialist', 'Support', 'Remote, UK', '£28,000 – £32,000'],
  ['Engineering manager, Payments', 'Engineering', 'Remote, UK', '£95,000 – £110,000'],
  ['Data engineer', 'Engineering', 'Hybrid, Bristol', '£60,000 – £72,000'],
  ['Content designer', 'Design', 'Remote, UK', '£42,000 – £50,000'],
  ['Mobile engineer (iOS)', 'Engineering', 'Remote, EU', '€60,000 – €75,000'],
  ['Sales development representative', 'Sales', 'Manchester', '£30,000 + commission'],
  ['QA engineer', 'Engineering', 'Leeds', '£40,000 – £48,000'],
];
const isRemote = (location: string) => location.startsWith('Remote');
const teams = [...new Set(openings.map(([, team]) => team))];
// 3. A changelog; each fix belongs to the version in the heading above it.
const releases: [version: string, date: string, changes: [kind: string, text: string][]][] = [
  [
    '3.2.0',
    '2 December 2026',
    [
      ['Added', 'Export to CSV from the reports page'],
      ['Fixed', 'Dates shown in the wrong time zone on invoices'],
      ['Fixed', 'Search ignored accented letters'],
    ],
  ],
  ['3.1.1', '18 November 2026', [['Fixed', 'Crash when a project had no members']]],
  [
    '3.1.0',
    '4 November 2026',
    [
      ['Added', 'Dark mode'],
      ['Changed', 'Faster start-up on large workspaces'],
      ['Fixed', 'Log-out button hidden on small screens'],
      ['Removed', 'The legacy XML export'],
    ],
  ],
  [
    '3.0.2',
    '21 October 2026',
    [
      ['Security', 'Updated the PDF library (CVE-2026-41177)'],
      ['Fixed', 'Duplicate e-mails on password reset'],
    ],
  ],
];
// 4. An FAQ of <details> elements, closed.
const faq: [question: string, answer: string][] = [
  ['How long does delivery take?', 'Orders placed before 2 pm arrive in two working days.'],
  ['Can I return an opened item?', 'Yes, within 30 days, as long as it is undamaged and in its box.'],
  ['Do you ship outside the UK?', 'We ship to Ireland, France, Germany and the Netherlands.'],
  ['How do I change my delivery address?', 'Open the order in your account and choose “Change address” before it is dispatched.'],
  ['Do you offer gift wrapping?', 'Gift wrapping costs £3.50 per item and can be added at checkout.'],
  ['Is my payment secure?', 'Card details go straight to our payment provider; we never see or store them.'],
];
// 5. A product whose colour swatches each set the price and the stock.
const throwColours: [colour: string, price: string, stock: string][] = [
  ['Oatmeal', '£68.00', '14 in stock'],
  ['Charcoal', '£68.00', '3 in stock'],
  ['Sage', '£72.00', 'Out of stock'],
  ['Rust', '£72.00', '8 in stock'],
];
// 6. A forum thread; replies nest inside the post they answer. Expected in reading order.
type Post = { author: string; when: string; text: string; replies: Post[] };
const thread: Post = {
  author: 'marguerite_k',
  when: '3 Dec 2026, 09:14',
  text: 'My sourdough starter smells like nail varnish. Is it dead?',
  replies: [
    {
      author: 'breadhead',
      when: '3 Dec 2026, 09:40',
      text: 'Not dead, just hungry. Feed it twice a day for a few days.',
      replies: [
        {
          author: 'marguerite_k',
          when: '3 Dec 2026, 10:02',
          text: 'Twice a day with the same flour?',
          replies: [{ author: 'breadhead', when: '3 Dec 2026, 10:15', text: 'Yes, and keep it somewhere warm.', replies: [] }],
        },
      ],
    },
    {
      author: 'oven_spring',
      when: '3 Dec 2026, 11:30',
      text: 'That smell means it ran out of food. It happens to everyone.',
      replies: [],
    },
    {
      author: 'mod_tilly',
      when: '4 Dec 2026, 08:05',
      text: 'Moved to Troubleshooting. Please search before posting!',
      replies: [
        {
          author: 'marguerite_k',
          when: '4 Dec 2026, 08:20',
          text: 'Sorry, will do. It is bubbling again now, thank you all.',
          replies: [],
        },
      ],
    },
  ],
};
const flatten = (post: Post): Post[] => [post, ...post.replies.flatMap(flatten)];
// 7. A league table; a clone of its header (aria-hidden) sits in a table of its own for the sticky bar.
const standings: [pos: string, club: string, played: string, won: string, drawn: string, lost: string, gd: string, points: string][] = [
  ['1', 'Harbour Town', '18', '13', '3', '2', '+24', '42'],
  ['2', 'Ashvale Rovers', '18', '12', '4', '2', '+19', '40'],
  ['3', 'Kingsmoor United', '18', '11', '3', '4', '+12', '36'],
  ['4', 'Millbrook Athletic', '17', '9', '5', '3', '+8', '32'],
  ['5', 'Castlegate FC', '18', '8', '4', '6', '+3', '28'],
  ['6', 'Redwater Wanderers', '18', '7', '5', '6', '0', '26'],
  ['7', 'Fenton Park', '17', '6', '5', '6', '-2', '23'],
  ['8', 'St Oswin’s', '18', '5', '4', '9', '-9', '19'],
  ['9', 'Lowfield Villa', '18', '3', '5', '10', '-21', '14'],
  ['10', 'Eastholm Rangers', '18', '2', '2', '14', '-34', '8'],
];
// 8. A property grid paged by "Next →" links to a new address.
const homes: [address: string, price: string, beds: string, baths: string][] = [
  ['14 Larch Close, Didsbury', '£425,000', '3 bedrooms', '2 bathrooms'],
  ['Flat 6, Weaver House, Ancoats', '£239,950', '2 bedrooms', '1 bathroom'],
  ['2 Orchard Row, Chorlton', '£365,000', '3 bedrooms', '1 bathroom'],
  ['51 Beech Road, Sale', '£510,000', '4 bedrooms', '2 bathrooms'],
  ['9 Canal Wharf, Castlefield', '£198,500', '1 bedroom', '1 bathroom'],
  ['The Old Chapel, Marple', '£685,000', '5 bedrooms', '3 bathrooms'],
  ['27 Kingsway Court, Levenshulme', '£172,000', '2 bedrooms', '1 bathroom'],
  ['3 Holly Mews, Altrincham', '£449,995', '3 bedrooms', '2 bathrooms'],
  ['88 Station Approach, Urmston', '£289,000', '3 bedrooms', '1 bathroom'],
  ['Flat 12, Cotton Mill, Stockport', '£154,950', '1 bedroom', '1 bathroom'],
  ['6 Meadow View, Bramhall', '£575,000', '4 bedrooms', '3 bathrooms'],
  ['40 Clifton Street, Prestwich', '£312,500', '3 bedrooms', '2 bathrooms'],
  ['19 Ferry Lane, Hale', '£799,000', '5 bedrooms', '4 bathrooms'],
];
const HOMES_PER_PAGE = 5;
// 9. A statement: one table, a row per month's heading, then its transactions.
const statement: [month: string, rows: [date: string, description: string, amount: string, balance: string][]][] = [
  [
    'September 2026',
    [
      ['26 Sep', 'Salary: Hartley & Moss Ltd', '+£2,140.00', '£2,612.37'],
      ['27 Sep', 'Card: Greenway Supermarket', '-£64.18', '£2,548.19'],
      ['29 Sep', 'Direct debit: Northern Water', '-£38.50', '£2,509.69'],
    ],
  ],
  [
    'October 2026',
    [
      ['1 Oct', 'Standing order: Rent', '-£875.00', '£1,634.69'],
      ['3 Oct', 'Card: Platform 9 Café', '-£7.40', '£1,627.29'],
      ['12 Oct', 'Transfer from J Adeyemi', '+£45.00', '£1,672.29'],
      ['20 Oct', 'Direct debit: Brightline Energy', '-£96.12', '£1,576.17'],
    ],
  ],
  [
    'November 2026',
    [
      ['2 Nov', 'Standing order: Rent', '-£875.00', '£701.17'],
      ['8 Nov', 'Card: Tallow & Wick', '-£22.99', '£678.18'],
      ['15 Nov', 'Refund: Parcelfast', '+£12.49', '£690.67'],
    ],
  ],
];
// 10. Exchange rates that a script fetches after the page has loaded (the answer is slow).
const fxRates: [currency: string, code: string, buy: string, sell: string][] = [
  ['Euro', 'EUR', '1.1642', '1.1038'],
  ['US dollar', 'USD', '1.2931', '1.2207'],
  ['Japanese yen', 'JPY', '196.41', '184.77'],
  ['Swiss franc', 'CHF', '1.1215', '1.0598'],
  ['Canadian dollar', 'CAD', '1.8104', '1.7036'],
  ['Australian dollar', 'AUD', '1.9822', '1.8571'],
  ['Swedish krona', 'SEK', '14.102', '13.214'],
  ['Polish złoty', 'PLN', '5.0417', '4.7389'],
];
const FX_DELAY_MS = 1500;
// 11. Recipes behind a cookie dialog that covers the "Show all" button.
const recipes: [name: string, time: string][] = [
  ['Roast squash and feta salad', '40 min'],
  ['One-pan lemon chicken', '55 min'],
  ['Mushroom stroganoff', '25 min'],
  ['Chickpea and spinach curry', '30 min'],
  ['Smoked haddock chowder', '35 min'],
  ['Leek and potato soup', '45 min'],
  ['Sticky miso aubergine', '30 min'],
  ['Beef and ale pie', '2 h 30 min'],
  ['Pea and mint risotto', '35 min'],
  ['Apple and blackberry crumble', '50 min'],
];
const RECIPES_FIRST = 6;
// 12. A catalogue search whose results are on a new address (a GET form).
const catalogue: [title: string, author: string, year: string, subjects: string][] = [
  ['Growing Orchids Indoors', 'Hana Mori', '2019', 'houseplants, orchids'],
  ['The Kitchen Garden Year', 'Pete Ashworth', '2012', 'vegetables, allotments'],
  ['The Orchid Hunters', 'Tobias Reed', '2004', 'history, plant collecting, orchids'],
  ['Succulents and Cacti', 'Lena Vogel', '2020', 'houseplants, succulents'],
  ['A Field Guide to Wild Orchids of Britain', 'Clare Atherton', '2015', 'wild flowers, orchids, field guides'],
  ['Pruning Made Simple', 'Graham Lowe', '2009', 'shrubs, trees, pruning'],
  ['Tropical Houseplants', 'Inês Carvalho', '2021', 'houseplants, ferns, orchids, bromeliads'],
  ['The Secret Life of Bees', 'Marta Kowalska', '2017', 'insects, bees, pollination'],
  ['Container Gardening', 'Sam Oduya', '2016', 'pots, balconies, small gardens'],
];
const ORCHIDS = 'orchids';
const searchCatalogue = (query: string) => {
  const terms = query
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .map((term) => term.replace(/s$/, ''));
  if (!terms.length) return [];
  return catalogue.filter(([title, author, , subjects]) => {
    const text = `${title} ${author} ${subjects}`.toLowerCase();
    return terms.every((term) => text.includes(term));
  });
};
// 13. An e-mail sign-in, then a dashboard.
const ACCOUNT_EMAIL = 'noor@example.com';
const subscriptions: [name: string, plan: string, renews: string][] = [
  ['Streamline Music', 'Family', '14 Dec 2026'],
  ['Daily Ledger (news)', 'Digital only', '2 Jan 2027'],
  ['CloudVault storage', '2 TB', '19 Jan 2027'],
  ['FitLoop', 'Annual', '8 Mar 2027'],
  ['Page & Quill audiobooks', 'Standard', '27 Dec 2026'],
];
const activity = [
  ['1 Dec 2026', 'Payment of £9.99 to Page & Quill audiobooks'],
  ['28 Nov 2026', 'Changed the plan of CloudVault storage'],
  ['24 Nov 2026', 'Signed in from a new device'],
];
// 14. One person's profile, as a definition list; a list of colleagues beside it.
const profile: [name: string, title: string, email: string, phone: string] = [
  'Amara Osei',
  'Head of Research Partnerships',
  'amara.osei@example.org',
  '+44 20 7946 0321',
];
const colleagues: [name: string, title: string][] = [
  ['Daniel Brook', 'Partnerships Officer'],
  ['Yusuf Demir', 'Grants Manager'],
  ['Ellie Marsh', 'Research Coordinator'],
];
// 15. Tickets from an API, paged in place by icon-only buttons and a page-number box.
const tickets: [id: string, subject: string, status: string][] = [
  ['#4821', 'Cannot reset my password', 'Open'],
  ['#4820', 'Invoice shows the wrong VAT number', 'Pending'],
  ['#4818', 'Export to CSV times out', 'Open'],
  ['#4815', 'Add a second admin to our account', 'Solved'],
  ['#4812', 'Two-factor codes arrive late', 'Open'],
  ['#4809', 'Refund for a duplicate charge', 'Solved'],
  ['#4807', 'Dark mode makes charts unreadable', 'Pending'],
  ['#4803', 'Webhook retries flood our server', 'Open'],
  ['#4800', 'Cannot upload files over 20 MB', 'Solved'],
  ['#4796', 'Change the company name on receipts', 'Solved'],
  ['#4793', 'API key rotation question', 'Pending'],
  ['#4790', 'Single sign-on with Okta', 'Open'],
  ['#4788', 'Deleted a project by mistake', 'Solved'],
  ['#4785', 'Search does not find archived items', 'Open'],
  ['#4781', 'Slow dashboard on Mondays', 'Pending'],
  ['#4779', 'Wrong time zone in e-mail digests', 'Solved'],
  ['#4774', 'Cannot remove an old card', 'Solved'],
  ['#4770', 'Request for an SLA document', 'Pending'],
];
const TICKETS_PER_PAGE = 4;
// 16. A comparison table whose columns are the items.
const phones: [name: string, price: string, screen: string, battery: string, storage: string, weight: string][] = [
  ['Pixel Nova 8', '£599', '6.3 in OLED', '4,700 mAh', '128 GB', '187 g'],
  ['Lumen X2', '£749', '6.7 in OLED', '5,000 mAh', '256 GB', '205 g'],
  ['Aster 5 Pro', '£429', '6.5 in LCD', '5,200 mAh', '128 GB', '199 g'],
  ['Kite S', '£329', '6.1 in LCD', '4,100 mAh', '64 GB', '168 g'],
];
const phoneRows: [label: string, column: number][] = [
  ['Price', 1],
  ['Screen', 2],
  ['Battery', 3],
  ['Storage', 4],
  ['Weight', 5],
];
// 17. A menu whose tabs each replace the one panel's dishes.
const menu: [tab: string, dishes: [dish: string, description: string, price: string][]][] = [
  [
    'Starters',
    [
      ['Burrata', 'Blood orange, basil oil, toasted seeds', '£9.50'],
      ['Crispy squid', 'Lime aioli, pickled chilli', '£8.75'],
      ['Soup of the day', 'With sourdough and cultured butter', '£6.50'],
    ],
  ],
  [
    'Mains',
    [
      ['Hake', 'Brown shrimp butter, samphire, new potatoes', '£21.00'],
      ['Lamb rump', 'Smoked aubergine, salsa verde', '£24.50'],
      ['Wild mushroom pappardelle', 'Parmesan, thyme, truffle oil', '£16.75'],
      ['Dry-aged burger', 'Comté, onion jam, fries', '£17.50'],
    ],
  ],
  [
    'Desserts',
    [
      ['Dark chocolate tart', 'Crème fraîche', '£8.00'],
      ['Sticky toffee pudding', 'Vanilla ice cream', '£7.50'],
    ],
  ],
];

// The pages without what is asked.
const arrivals: [flight: string, from: string, scheduled: string, expected: string, belt: string, status: string][] = [
  ['BA 1392', 'London Heathrow', '14:05', '14:12', '3', 'Landed'],
  ['EI 3327', 'Dublin', '14:20', '14:20', '1', 'On time'],
  ['KL 1545', 'Amsterdam', '14:35', '14:58', '4', 'Delayed'],
  ['LS 0812', 'Alicante', '14:50', '14:46', '2', 'Landed'],
  ['FR 2241', 'Kraków', '15:10', '15:10', '-', 'On time'],
  ['U2 0431', 'Geneva', '15:25', '15:40', '-', 'Delayed'],
];
const ingredients = [
  '400 g dried red lentils',
  '1 large onion, finely chopped',
  '3 cloves garlic, crushed',
  '2 tsp ground cumin',
  '1 tin (400 g) chopped tomatoes',
  '1 litre vegetable stock',
  'Juice of half a lemon',
];
const speakers: [name: string, company: string, talk: string][] = [
  ['Ruth Okonkwo', 'Tidewater Labs', 'Queues that never lose a message'],
  ['Mateo Ruiz', 'Parcelhub', 'Migrating a monolith one table at a time'],
  ['Sophie Lindqvist', 'Northbank Health', 'Accessible forms, measured'],
  ['Kenji Watanabe', 'Fernleaf', 'What our outage taught us about retries'],
  ['Priya Raman', 'Open Transit', 'Timetables as data'],
];

export const heldoutShapes2: Shape[] = [
  {
    name: 'plan cards, yearly prices behind a billing switch',
    prompts: {
      careful: (url) => `Open ${url}/pricing and list each plan's name with its price when billed yearly`,
      hurried: (url) => `${url}/pricing yearly price of every plan?`,
    },
    expected: pricingPlans.map(([name, , yearly]) => [name, yearly]),
  },
  {
    name: 'job board, remote engineering roles by filters',
    prompts: {
      careful: (url) => `Go to ${url}/careers and list the remote jobs in the Engineering team, with each job's title, location and salary`,
      hurried: (url) => `remote engineering jobs at ${url}/careers - title location salary`,
    },
    expected: openings
      .filter(([, team, location]) => team === 'Engineering' && isRemote(location))
      .map(([title, , location, salary]) => [title, location, salary]),
  },
  {
    name: 'changelog, fixes under their version heading',
    prompts: {
      careful: (url) => `Open ${url}/changelog and list every bug fix together with the version number it shipped in`,
      hurried: (url) => `${url}/changelog all the fixes + which version`,
    },
    expected: releases.flatMap(([version, , changes]) => changes.filter(([kind]) => kind === 'Fixed').map(([, text]) => [version, text])),
  },
  {
    name: 'FAQ of closed <details> elements',
    prompts: {
      careful: (url) => `Open ${url}/help/faq and extract every question with its answer`,
      hurried: (url) => `faq questions and answers from ${url}/help/faq`,
    },
    expected: faq,
  },
  {
    name: 'product colours, each swatch sets price and stock',
    prompts: {
      careful: (url) =>
        `Open ${url}/home/nordic-wool-throw and, for each colour the throw comes in, give the colour, its price and its stock`,
      hurried: (url) => `${url}/home/nordic-wool-throw price n stock per colour`,
    },
    expected: throwColours,
  },
  {
    name: 'forum thread with nested replies',
    prompts: {
      careful: (url) =>
        `Open ${url}/forum/t/8841 and extract every post in the thread, replies to replies included, with its author, when it was posted and its text`,
      hurried: (url) => `${url}/forum/t/8841 get all posts incl replies (author, time, text)`,
    },
    expected: flatten(thread).map(({ author, when, text }) => [author, when, text]),
  },
  {
    name: 'league standings under a cloned sticky header',
    prompts: {
      careful: (url) => `Open ${url}/league/table and give me each club's position, name, games played and points`,
      hurried: (url) => `standings ${url}/league/table pos club played pts`,
    },
    expected: standings.map(([pos, club, played, , , , , points]) => [pos, club, played, points]),
  },
  {
    name: 'property grid paged by "Next →" links',
    prompts: {
      careful: (url) =>
        `Open ${url}/property/for-sale and list every home for sale on all the result pages, with its address, asking price and number of bedrooms`,
      hurried: (url) => `${url}/property/for-sale all listings all pages: address, price, beds`,
    },
    expected: homes.map(([address, price, beds]) => [address, price, beds]),
  },
  {
    name: 'statement table split by month rows',
    prompts: {
      careful: (url) => `Open ${url}/banking/statement and extract every transaction with its date, description and amount`,
      hurried: (url) => `transactions from ${url}/banking/statement (date, description, amount)`,
    },
    expected: statement.flatMap(([, rows]) => rows.map(([date, description, amount]) => [date, description, amount])),
  },
  {
    name: 'exchange rates fetched after a delay',
    prompts: {
      careful: (url) =>
        `Open ${url}/travel-money/rates and extract today's exchange rates: each currency's name, code, our buy rate and our sell rate`,
      hurried: (url) => `${url}/travel-money/rates grab the fx rates table`,
    },
    expected: fxRates,
  },
  {
    name: 'cookie dialog over a "Show all" button',
    prompts: {
      careful: (url) => `Open ${url}/recipes/weeknight and list all the recipes on the page with their cooking time`,
      hurried: (url) => `all recipes + cook time ${url}/recipes/weeknight`,
    },
    expected: recipes,
  },
  {
    name: 'catalogue search, results on a new address',
    prompts: {
      careful: (url) => `Open ${url}/library, search the catalogue for ${ORCHIDS}, and list each result's title, author and year`,
      hurried: (url) => `${url}/library search ${ORCHIDS}, list the books (title author year)`,
    },
    expected: searchCatalogue(ORCHIDS).map(([title, author, year]) => [title, author, year]),
  },
  {
    name: 'e-mail sign-in, then a dashboard of subscriptions',
    prompts: {
      careful: (url) =>
        `Sign in at ${url}/account/sign-in with the email "${ACCOUNT_EMAIL}" and the password "${SECRET}", then list my subscriptions with their plan and renewal date`,
      hurried: (url) => `${url}/account/sign-in ${ACCOUNT_EMAIL} / ${SECRET} my subscriptions: plan + renewal date`,
    },
    secret: SECRET,
    expected: subscriptions,
  },
  {
    name: 'one profile as a definition list',
    prompts: {
      careful: (url) => `Open ${url}/directory/amara-osei and get this person's name, job title, email address and phone number`,
      hurried: (url) => `${url}/directory/amara-osei name, job title, email, phone`,
    },
    expected: [profile],
  },
  {
    name: 'tickets paged by icon buttons and "Page 1 of 5"',
    prompts: {
      careful: (url) => `Open ${url}/helpdesk/tickets and extract every ticket on all the pages with its number, subject and status`,
      hurried: (url) => `${url}/helpdesk/tickets every ticket, all pages - number subject status`,
    },
    expected: tickets,
  },
  {
    name: 'comparison table, the items are its columns',
    prompts: {
      careful: (url) => `Open ${url}/compare/phones and list each phone in the comparison with its price and battery capacity`,
      hurried: (url) => `${url}/compare/phones each phone: name price battery`,
    },
    expected: phones.map(([name, price, , battery]) => [name, price, battery]),
  },
  {
    name: 'menu tabs, each replacing the one panel',
    prompts: {
      careful: (url) =>
        `Open ${url}/restaurant/menu and list every dish on the menu, from all its sections, with the dish's name and price`,
      hurried: (url) => `${url}/restaurant/menu whole menu, dish + price (every tab)`,
    },
    expected: menu.flatMap(([, dishes]) => dishes.map(([dish, , price]) => [dish, price])),
  },
  // The pages without what is asked.
  {
    name: 'gate numbers asked, arrivals board with baggage belts',
    prompts: {
      careful: (url) => `Open ${url}/airport/arrivals and list each arriving flight with its gate number`,
      hurried: (url) => `${url}/airport/arrivals gate for each flight`,
    },
    expected: [],
    goalMissing: true,
  },
  {
    name: 'calories asked, recipe without nutrition',
    prompts: {
      careful: (url) => `Open ${url}/recipes/red-lentil-soup and tell me how many calories there are per serving`,
      hurried: (url) => `kcal per serving? ${url}/recipes/red-lentil-soup`,
    },
    expected: [],
    goalMissing: true,
  },
  {
    name: 'social handles asked, speakers without them',
    prompts: {
      careful: (url) => `Open ${url}/conference/speakers and list each speaker's name with their Twitter or X handle`,
      hurried: (url) => `${url}/conference/speakers speakers + their twitter handles`,
    },
    expected: [],
    goalMissing: true,
  },
];

const esc = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-');
/** A value for a page's script: JSON that cannot close the script element. */
const scriptValue = (value: unknown) => JSON.stringify(value).replaceAll('<', '\\u003c');

/**
 * Serves the second held-out set's pages on one local site, as `startHeldoutSite` serves the first
 * set's. `setCosmetic(true)` serves the same content, ids, labels and aria attributes with other
 * classes and more wrappers.
 */
export async function startHeldout2Site() {
  let cosmetic = false;
  /** Signed-in sessions of the account pages, by cookie value. */
  const sessions = new Set<string>();
  /** A class attribute's value: another one after the redesign. */
  const c = (name: string) => (cosmetic ? `x${name.length}-${name.split('').reverse().join('')} w` : name);
  const frame = (title: string, body: string, script = '') =>
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${esc(title)}</title><style>body{font-family:sans-serif;margin:0}main{padding:1rem}</style></head><body>${
      cosmetic
        ? `<div class="${c('shell')}"><nav class="${c('nav')}"><a href="/">Home</a></nav><div class="${c('page')}"><main id="content"><div class="${c('title-bar')}"><h1>${esc(title)}</h1></div><div class="${c('body')}"><div class="${c('inner')}">${body}</div></div></main></div><div class="${c('small-print')}">© 2026 · Terms · Privacy</div></div>`
        : `<header class="${c('site-header')}"><a href="/">Home</a></header><main id="content"><h1>${esc(title)}</h1>${body}</main><footer class="${c('site-footer')}">© 2026 · Terms · Privacy</footer>`
    }${script ? `<script>${script}</script>` : ''}</body></html>`;
  const readForm = (req: http.IncomingMessage) =>
    new Promise<URLSearchParams>((resolve) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => resolve(new URLSearchParams(body)));
    });
  const cookieOf = (req: http.IncomingMessage, name: string) =>
    (req.headers.cookie ?? '')
      .split(';')
      .map((part) => part.trim().split('='))
      .find(([key]) => key === name)?.[1];

  // Markup that the pages' scripts add, made here so that it follows the redesign too.
  const jobCard = ([title, team, location, salary]: (typeof openings)[number]) =>
    `<li class="${c('job-card')}"><h3 class="${c('job-name')}">${esc(title)}</h3><span class="${c('pill')}">${esc(team)}</span><p class="${c('job-loc')}">${esc(location)}</p><p class="${c('job-pay')}">${esc(salary)}</p></li>`;
  const recipeCard = ([name, time]: (typeof recipes)[number]) =>
    `<li class="${c('recipe')}"><a href="#${slug(name)}" class="${c('recipe-link')}">${esc(name)}</a><span class="${c('recipe-time')}"><span aria-hidden="true">⏱</span> <span class="${c('mins')}">${esc(time)}</span></span></li>`;
  const ticketRow = ([id, subject, status]: (typeof tickets)[number]) =>
    `<li class="${c('ticket')}"><span class="${c('t-id')}">${esc(id)}</span> <a href="#t${id.slice(1)}" class="${c('t-subject')}">${esc(subject)}</a> <span class="${c(`badge badge-${status.toLowerCase()}`)}">${esc(status)}</span></li>`;
  const dishRow = ([dish, description, price]: (typeof menu)[number][1][number]) =>
    `<li class="${c('dish')}"><div class="${c('dish-head')}"><span class="${c('dish-name')}">${esc(dish)}</span><span class="${c('dots')}" aria-hidden="true"></span><span class="${c('dish-price')}">${esc(price)}</span></div><p class="${c('dish-desc')}">${esc(description)}</p></li>`;
  const postHtml = (post: Post, depth: number): string =>
    `<article class="${c('post')}" aria-label="Post by ${esc(post.author)}"${depth ? ` style="margin-left:${depth * 1.5}rem"` : ''}><header class="${c('post-meta')}"><a href="/forum/u/${esc(post.author)}" class="${c('author')}">${esc(post.author)}</a> · <time>${esc(post.when)}</time></header><div class="${c('post-body')}"><p>${esc(post.text)}</p></div><footer><button type="button">Reply</button> <button type="button">Quote</button></footer>${
      post.replies.length ? `<div class="${c('replies')}">${post.replies.map((reply) => postHtml(reply, depth + 1)).join('')}</div>` : ''
    }</article>`;

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    const send = (html: string, status = 200, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
      res.end(html);
    };
    const sendJson = (value: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    const redirect = (location: string, headers: Record<string, string> = {}) => {
      res.writeHead(303, { location, ...headers });
      res.end();
    };
    switch (url.pathname) {
      case '/pricing':
        return send(
          frame(
            'Simple pricing for every team',
            `<fieldset class="${c('billing')}"><legend>Billing</legend><label><input type="radio" name="billing" value="monthly" checked> Monthly</label> <label><input type="radio" name="billing" value="yearly"> Yearly <span class="${c('save')}">2 months free</span></label></fieldset><div class="${c('plan-row')}">${pricingPlans
              .map(
                ([name, monthly, , seats], i) =>
                  `<div class="${c('plan-card')}${i === 2 ? ` ${c('popular')}` : ''}">${i === 2 ? `<span class="${c('ribbon')}">Most popular</span>` : ''}<h2 class="${c('plan-name')}">${esc(name)}</h2><p class="${c('plan-price')}"><span class="${c('amount')}" data-plan="${i}">${esc(monthly)}</span><span class="${c('per')}" data-per="${i}">/month</span></p><p class="${c('seats')}">${esc(seats)}</p><a class="${c('btn')}" href="#signup-${slug(name)}">${i === 0 ? 'Start free' : 'Start trial'}</a></div>`,
              )
              .join('')}</div>`,
            `const prices = ${scriptValue(pricingPlans.map(([, monthly, yearly]) => ({ monthly, yearly })))};
for (const radio of document.querySelectorAll('input[name=billing]')) radio.addEventListener('change', () => {
  const period = document.querySelector('input[name=billing]:checked').value;
  prices.forEach((price, i) => {
    document.querySelector('[data-plan="' + i + '"]').textContent = price[period];
    document.querySelector('[data-per="' + i + '"]').textContent = period === 'yearly' ? '/year' : '/month';
  });
});`,
          ),
        );
      case '/careers':
        return send(
          frame(
            'Careers',
            `<p>We are ${openings.length} roles away from our next chapter.</p><form class="${c('filters')}" aria-label="Filter jobs"><fieldset><legend>Team</legend>${teams
              .map((team) => `<label><input type="checkbox" name="team" value="${esc(team)}"> ${esc(team)}</label>`)
              .join(
                ' ',
              )}</fieldset><label><input type="checkbox" name="remote" id="remote-only"> Remote only</label></form><p id="job-count" aria-live="polite">${openings.length} jobs</p><ul id="job-list" class="${c('jobs')}">${openings.map(jobCard).join('')}</ul>`,
            `const jobs = ${scriptValue(openings.map((job) => ({ job, html: jobCard(job) })))};
const form = document.querySelector('form[aria-label="Filter jobs"]');
form.addEventListener('change', () => {
  const picked = [...form.querySelectorAll('input[name=team]:checked')].map((box) => box.value);
  const remote = document.getElementById('remote-only').checked;
  const shown = jobs.filter(({ job }) => (!picked.length || picked.includes(job[1])) && (!remote || job[2].startsWith('Remote')));
  document.getElementById('job-list').innerHTML = shown.map(({ html }) => html).join('');
  document.getElementById('job-count').textContent = shown.length + (shown.length === 1 ? ' job' : ' jobs');
});`,
          ),
        );
      case '/changelog':
        return send(
          frame(
            'Changelog',
            `<p>Every release of the desktop and web apps. Subscribe to the <a href="/changelog.rss">RSS feed</a>.</p>${releases
              .map(
                ([version, date, changes]) =>
                  `<section class="${c('release')}" id="v${version}"><h2><span class="${c('version')}">${esc(version)}</span> <time class="${c('released')}">${esc(date)}</time></h2><ul class="${c('changes')}">${changes
                    .map(
                      ([kind, text]) =>
                        `<li><span class="${c(`tag tag-${kind.toLowerCase()}`)}">${esc(kind)}</span> <span class="${c('change')}">${esc(text)}</span></li>`,
                    )
                    .join('')}</ul></section>`,
              )
              .join('')}`,
          ),
        );
      case '/help/faq':
        return send(
          frame(
            'Frequently asked questions',
            `<div class="${c('faq')}">${faq
              .map(
                ([question, answer]) =>
                  `<details class="${c('qa')}"><summary class="${c('q')}">${esc(question)}</summary><div class="${c('a')}"><p>${esc(answer)}</p></div></details>`,
              )
              .join(
                '',
              )}</div><aside class="${c('contact')}"><h2>Still stuck?</h2><p>Our team answers within a day.</p><a href="/help/contact">Contact us</a></aside>`,
          ),
        );
      case '/home/nordic-wool-throw': {
        const [colour, price, stock] = throwColours[0] ?? ['', '', ''];
        return send(
          frame(
            'Nordic wool throw',
            `<div class="${c('buy-box')}"><p class="${c('price-line')}"><span id="price">${esc(price)}</span></p><p>Colour: <strong id="colour-name">${esc(colour)}</strong></p><div role="group" aria-label="Colour" class="${c('swatches')}">${throwColours
              .map(
                ([name], i) =>
                  `<button type="button" class="${c('swatch')}" aria-label="${esc(name)}" title="${esc(name)}" aria-pressed="${i === 0}" data-variant="${i}"></button>`,
              )
              .join(
                '',
              )}</div><p class="${c('availability')}"><span id="stock">${esc(stock)}</span></p><button type="button" id="add">Add to basket</button></div><h2>Specifications</h2><table class="${c('spec-table')}"><tr><th scope="row">Material</th><td>100% lambswool</td></tr><tr><th scope="row">Size</th><td>130 × 180 cm</td></tr><tr><th scope="row">Weight</th><td>1.1 kg</td></tr><tr><th scope="row">Care</th><td>Dry clean only</td></tr></table>`,
            `const variants = ${scriptValue(throwColours)};
for (const swatch of document.querySelectorAll('[data-variant]')) swatch.addEventListener('click', () => {
  const [colour, price, stock] = variants[Number(swatch.dataset.variant)];
  for (const other of document.querySelectorAll('[data-variant]')) other.setAttribute('aria-pressed', String(other === swatch));
  document.getElementById('colour-name').textContent = colour;
  document.getElementById('price').textContent = price;
  document.getElementById('stock').textContent = stock;
  document.getElementById('add').disabled = stock === 'Out of stock';
});`,
          ),
        );
      }
      case '/forum/t/8841':
        return send(
          frame(
            'Starter smells like nail varnish?',
            `<p class="${c('crumbs')}"><a href="/forum">Forum</a> › <a href="/forum/c/troubleshooting">Troubleshooting</a></p><p class="${c('thread-stats')}">${flatten(thread).length} posts · 212 views</p><div class="${c('thread')}">${postHtml(thread, 0)}</div>`,
          ),
        );
      case '/league/table': {
        const head = `<thead><tr><th scope="col" title="Position">Pos</th><th scope="col">Club</th><th scope="col" title="Played">P</th><th scope="col" title="Won">W</th><th scope="col" title="Drawn">D</th><th scope="col" title="Lost">L</th><th scope="col" title="Goal difference">GD</th><th scope="col" title="Points">Pts</th></tr></thead>`;
        return send(
          frame(
            'County League, Division One',
            `<div class="${c('sticky-bar')}" style="position:sticky;top:0;background:#fff"><table class="${c('sticky-clone')}" aria-hidden="true">${head}</table></div><table class="${c('standings')}" id="standings"><caption>Table after 18 rounds</caption>${head}<tbody>${standings
              .map(
                (row, i) =>
                  `<tr class="${c(i < 2 ? 'zone-up' : i > 7 ? 'zone-down' : 'zone-mid')}">${row.map((value, column) => (column === 1 ? `<th scope="row">${esc(value)}</th>` : `<td>${esc(value)}</td>`)).join('')}</tr>`,
              )
              .join(
                '',
              )}</tbody><tfoot><tr><td colspan="8">The top two are promoted; the bottom two are relegated.</td></tr></tfoot></table>`,
          ),
        );
      }
      case '/property/for-sale': {
        const pages = Math.ceil(homes.length / HOMES_PER_PAGE);
        const page = Math.min(Math.max(Number(url.searchParams.get('page') ?? '1') || 1, 1), pages);
        return send(
          frame(
            'Homes for sale in South Manchester',
            `<p class="${c('result-count')}">${homes.length} homes · sorted by newest</p><div class="${c('grid')}" style="display:grid;grid-template-columns:repeat(3,1fr);gap:1rem">${homes
              .slice((page - 1) * HOMES_PER_PAGE, page * HOMES_PER_PAGE)
              .map(
                ([address, price, beds, baths]) =>
                  `<a class="${c('tile')}" href="/property/${slug(address)}"><div class="${c('photo')}" role="img" aria-label="Photo of ${esc(address)}"></div><p class="${c('tile-price')}">${esc(price)}</p><h3 class="${c('tile-address')}">${esc(address)}</h3><ul class="${c('facts')}"><li>${esc(beds)}</li><li>${esc(baths)}</li></ul></a>`,
              )
              .join('')}</div><nav aria-label="Pagination" class="${c('pager')}">${
              page > 1 ? `<a href="/property/for-sale?page=${page - 1}">← Previous</a> ` : ''
            }<span>Page ${page} of ${pages}</span>${page < pages ? ` <a href="/property/for-sale?page=${page + 1}">Next →</a>` : ''}</nav>`,
          ),
        );
      }
      case '/banking/statement':
        return send(
          frame(
            'Current account statement',
            `<p class="${c('account')}">Everyday Current Account · sort code 20-45-77 · account ending 8812</p><table class="${c('statement')}"><thead><tr><th scope="col">Date</th><th scope="col">Description</th><th scope="col">Amount</th><th scope="col">Balance</th></tr></thead><tbody>${statement
              .map(
                ([month, rows]) =>
                  `<tr class="${c('month-row')}"><th colspan="4" scope="colgroup">${esc(month)}</th></tr>${rows
                    .map((row) => `<tr>${row.map((value) => `<td>${esc(value)}</td>`).join('')}</tr>`)
                    .join('')}`,
              )
              .join('')}</tbody></table><p>Closing balance on 30 November 2026: <strong>£690.67</strong></p>`,
          ),
        );
      case '/travel-money/rates':
        return send(
          frame(
            'Travel money: today’s rates',
            `<p>Rates are per £1 and change through the day.</p><div id="rates" class="${c('rates-box')}" aria-busy="true"><p class="${c('spinner')}">Loading rates…</p></div>`,
            `fetch('/travel-money/rates.json').then((answer) => answer.json()).then((rows) => {
  const box = document.getElementById('rates');
  box.innerHTML = '<table class="${c('fx')}"><thead><tr><th>Currency</th><th>Code</th><th>We buy</th><th>We sell</th></tr></thead><tbody>' +
    rows.map((row) => '<tr>' + row.map((value) => '<td>' + value + '</td>').join('') + '</tr>').join('') + '</tbody></table>';
  box.setAttribute('aria-busy', 'false');
});`,
          ),
        );
      case '/travel-money/rates.json':
        await delay(FX_DELAY_MS);
        return sendJson(fxRates.map((row) => row.map(esc)));
      case '/recipes/weeknight':
        return send(
          frame(
            'Weeknight dinners',
            `<p>Quick, cheap and mostly one pan.</p><ul id="recipes" class="${c('recipe-list')}">${recipes
              .slice(0, RECIPES_FIRST)
              .map(recipeCard)
              .join(
                '',
              )}</ul><button type="button" id="show-all" class="${c('show-all')}">Show all ${recipes.length} recipes</button><div id="consent" role="dialog" aria-modal="true" aria-label="Cookie preferences" class="${c('consent')}" style="position:fixed;inset:0;background:rgba(0,0,0,.55);z-index:10;display:flex;align-items:flex-end"><div style="background:#fff;padding:1.5rem;width:100%"><p>We use cookies to remember your preferences and to measure how the site is used.</p><button type="button" id="consent-accept">Accept all</button> <button type="button" id="consent-reject">Reject non-essential</button></div></div>`,
            `const consent = document.getElementById('consent');
if (document.cookie.includes('consent=')) consent.remove();
for (const id of ['consent-accept', 'consent-reject']) document.getElementById(id).addEventListener('click', () => {
  document.cookie = 'consent=' + (id === 'consent-accept' ? 'all' : 'essential') + '; path=/';
  consent.remove();
});
const all = document.getElementById('show-all');
all.addEventListener('click', async () => {
  all.disabled = true;
  const answer = await (await fetch('/recipes/weeknight/rest')).json();
  document.getElementById('recipes').insertAdjacentHTML('beforeend', answer.html);
  all.remove();
});`,
          ),
        );
      case '/recipes/weeknight/rest':
        await delay(250);
        return sendJson({ html: recipes.slice(RECIPES_FIRST).map(recipeCard).join('') });
      case '/library':
        return send(
          frame(
            'Riverside Library',
            `<form role="search" action="/library/search" method="get" class="${c('search')}"><label for="q">Search the catalogue</label> <input id="q" name="q" type="search" placeholder="Title, author or subject"> <button type="submit">Search</button></form><h2>New this week</h2><ul class="${c('new-books')}">${catalogue
              .slice(-3)
              .map(([title, author]) => `<li><cite>${esc(title)}</cite> by ${esc(author)}</li>`)
              .join('')}</ul><h2>Opening times</h2><p>Monday to Saturday, 9:00 to 19:00.</p>`,
          ),
        );
      case '/library/search': {
        const query = (url.searchParams.get('q') ?? '').trim();
        const found = searchCatalogue(query);
        return send(
          frame(
            'Search results',
            `<form role="search" action="/library/search" method="get" class="${c('search')}"><label for="q">Search the catalogue</label> <input id="q" name="q" type="search" value="${esc(query)}"> <button type="submit">Search</button></form><p class="${c('summary')}">${found.length} result${found.length === 1 ? '' : 's'} for “${esc(query)}”</p>${
              found.length
                ? `<ol class="${c('results')}">${found
                    .map(
                      ([title, author, year]) =>
                        `<li class="${c('hit')}"><h3><a href="/library/item/${slug(title)}">${esc(title)}</a></h3><p class="${c('byline')}">by <span class="${c('creator')}">${esc(author)}</span></p><p class="${c('pub')}">Published <span class="${c('year')}">${esc(year)}</span></p></li>`,
                    )
                    .join('')}</ol>`
                : '<p>Try another word, or check the spelling.</p>'
            }`,
          ),
        );
      }
      case '/account/sign-in': {
        const form = (email: string, error = '') =>
          `<form method="post" action="/account/sign-in" class="${c('sign-in')}">${error ? `<p role="alert" class="${c('alert')}">${esc(error)}</p>` : ''}<label for="email">Email</label> <input id="email" name="email" type="email" value="${esc(email)}" autocomplete="username"> <label for="password">Password</label> <input id="password" name="password" type="password" autocomplete="current-password"> <button type="submit">Sign in</button></form>`;
        if (req.method !== 'POST') return send(frame('Sign in to your account', form('')));
        const answer = await readForm(req);
        const email = (answer.get('email') ?? '').trim();
        if (email.toLowerCase() !== ACCOUNT_EMAIL || answer.get('password') !== SECRET)
          return send(frame('Sign in to your account', form(email, 'That email and password do not match an account.')), 401);
        const token = randomUUID();
        sessions.add(token);
        return redirect('/account/dashboard', { 'set-cookie': `sid=${token}; Path=/; HttpOnly; SameSite=Lax` });
      }
      case '/account/dashboard': {
        if (!sessions.has(cookieOf(req, 'sid') ?? '')) return redirect('/account/sign-in');
        return send(
          frame(
            'Your dashboard',
            `<p class="${c('hello')}">Signed in as ${esc(ACCOUNT_EMAIL)}</p><section aria-labelledby="subs-h"><h2 id="subs-h">Your subscriptions</h2><table class="${c('subs')}"><thead><tr><th>Service</th><th>Plan</th><th>Renews on</th></tr></thead><tbody>${subscriptions
              .map((row) => `<tr>${row.map((value) => `<td>${esc(value)}</td>`).join('')}</tr>`)
              .join(
                '',
              )}</tbody></table></section><section aria-labelledby="activity-h"><h2 id="activity-h">Recent activity</h2><ul class="${c('activity')}">${activity
              .map(([date, text]) => `<li><time>${esc(date as string)}</time> ${esc(text as string)}</li>`)
              .join('')}</ul></section><form method="post" action="/account/sign-out"><button type="submit">Sign out</button></form>`,
          ),
        );
      }
      case '/directory/amara-osei': {
        const [name, title, email, phone] = profile;
        return send(
          frame(
            name,
            `<div class="${c('profile')}"><div class="${c('avatar')}" role="img" aria-label="Photo of ${esc(name)}"></div><dl class="${c('details')}"><dt>Job title</dt><dd>${esc(title)}</dd><dt>Department</dt><dd>Research Office</dd><dt>Email</dt><dd><a href="mailto:${esc(email)}">${esc(email)}</a></dd><dt>Phone</dt><dd><a href="tel:${phone.replaceAll(' ', '')}">${esc(phone)}</a></dd><dt>Office</dt><dd>Room 4.12, Maxwell Building</dd></dl></div><aside class="${c('team')}"><h2>Others in Research Partnerships</h2><ul>${colleagues
              .map(
                ([other, role]) =>
                  `<li><a href="/directory/${slug(other)}">${esc(other)}</a> <span class="${c('role')}">${esc(role)}</span></li>`,
              )
              .join('')}</ul></aside>`,
          ),
        );
      }
      case '/helpdesk/tickets': {
        const pages = Math.ceil(tickets.length / TICKETS_PER_PAGE);
        return send(
          frame(
            'Support tickets',
            `<ul id="tickets" class="${c('ticket-list')}" aria-busy="true"></ul><div class="${c('pager-bar')}"><button type="button" id="prev-page" aria-label="Previous page" disabled>‹</button> <span>Page <input id="page-number" type="number" min="1" max="${pages}" value="1" aria-label="Page number" style="width:3em"> of <span id="page-count">${pages}</span></span> <button type="button" id="go">Go</button> <button type="button" id="next-page" aria-label="Next page">›</button></div>`,
            `let page = 1;
async function show(n) {
  const list = document.getElementById('tickets');
  list.setAttribute('aria-busy', 'true');
  const answer = await (await fetch('/helpdesk/api/tickets?page=' + n)).json();
  page = answer.page;
  list.innerHTML = answer.html;
  list.setAttribute('aria-busy', 'false');
  document.getElementById('page-number').value = String(answer.page);
  document.getElementById('prev-page').disabled = answer.page === 1;
  document.getElementById('next-page').disabled = answer.page === answer.pages;
}
document.getElementById('next-page').addEventListener('click', () => show(page + 1));
document.getElementById('prev-page').addEventListener('click', () => show(page - 1));
document.getElementById('go').addEventListener('click', () => show(Number(document.getElementById('page-number').value) || 1));
show(1);`,
          ),
        );
      }
      case '/helpdesk/api/tickets': {
        await delay(250);
        const pages = Math.ceil(tickets.length / TICKETS_PER_PAGE);
        const page = Math.min(Math.max(Number(url.searchParams.get('page')) || 1, 1), pages);
        return sendJson({
          page,
          pages,
          html: tickets
            .slice((page - 1) * TICKETS_PER_PAGE, page * TICKETS_PER_PAGE)
            .map(ticketRow)
            .join(''),
        });
      }
      case '/compare/phones':
        return send(
          frame(
            'Compare phones',
            `<p>Prices are SIM-free, including VAT.</p><table class="${c('compare')}"><thead><tr><td></td>${phones
              .map(
                ([name]) =>
                  `<th scope="col"><div class="${c('phone-img')}" role="img" aria-label="Picture of ${esc(name)}"></div><span class="${c('phone-name')}">${esc(name)}</span></th>`,
              )
              .join('')}</tr></thead><tbody>${phoneRows
              .map(
                ([label, column]) =>
                  `<tr><th scope="row">${esc(label)}</th>${phones.map((phone) => `<td>${esc(phone[column] as string)}</td>`).join('')}</tr>`,
              )
              .join('')}<tr><td></td>${phones
              .map(([name]) => `<td><a href="/phones/${slug(name)}" class="${c('btn')}">See deals</a></td>`)
              .join('')}</tr></tbody></table>`,
          ),
        );
      case '/restaurant/menu': {
        const [first] = menu;
        return send(
          frame(
            'Our menu',
            `<p>Served Tuesday to Saturday, 12:00 to 21:30. Please tell us about any allergies.</p><div role="tablist" aria-label="Menu sections" class="${c('menu-tabs')}">${menu
              .map(
                ([tab], i) =>
                  `<button type="button" role="tab" id="tab-${i}" aria-controls="menu-panel" aria-selected="${i === 0}" data-tab="${i}">${esc(tab)}</button>`,
              )
              .join(
                '',
              )}</div><div role="tabpanel" id="menu-panel" aria-labelledby="tab-0"><ul class="${c('dishes')}">${(first?.[1] ?? []).map(dishRow).join('')}</ul></div>`,
            `const sections = ${scriptValue(menu.map(([, dishes]) => dishes.map(dishRow).join('')))};
for (const tab of document.querySelectorAll('[role=tab]')) tab.addEventListener('click', () => {
  for (const other of document.querySelectorAll('[role=tab]')) other.setAttribute('aria-selected', String(other === tab));
  const panel = document.getElementById('menu-panel');
  panel.setAttribute('aria-labelledby', tab.id);
  panel.innerHTML = '<ul class="${c('dishes')}">' + sections[Number(tab.dataset.tab)] + '</ul>';
});`,
          ),
        );
      }
      // The pages without what is asked.
      case '/airport/arrivals':
        return send(
          frame(
            'Arrivals',
            `<p>Updated every minute. Collect your bags from the belt shown.</p><table class="${c('board')}"><thead><tr><th>Flight</th><th>From</th><th>Scheduled</th><th>Expected</th><th>Belt</th><th>Status</th></tr></thead><tbody>${arrivals
              .map((row) => `<tr>${row.map((value) => `<td>${esc(value)}</td>`).join('')}</tr>`)
              .join('')}</tbody></table>`,
          ),
        );
      case '/recipes/red-lentil-soup':
        return send(
          frame(
            'Red lentil soup',
            `<p class="${c('recipe-facts')}"><span>Serves 4</span> · <span>Prep 10 min</span> · <span>Cook 30 min</span></p><h2>Ingredients</h2><ul class="${c('ingredients')}">${ingredients
              .map((item) => `<li>${esc(item)}</li>`)
              .join(
                '',
              )}</ul><h2>Method</h2><ol class="${c('method')}"><li>Soften the onion and garlic in a little oil for 5 minutes.</li><li>Stir in the cumin, then the lentils, tomatoes and stock.</li><li>Simmer for 25 minutes, stirring now and then, until the lentils collapse.</li><li>Blend until smooth, add the lemon juice and season to taste.</li></ol>`,
          ),
        );
      case '/conference/speakers':
        return send(
          frame(
            'Speakers',
            `<p>Twelve talks over two days in Leeds, 4 and 5 March 2027.</p><div class="${c('speaker-grid')}">${speakers
              .map(
                ([name, company, talk]) =>
                  `<div class="${c('speaker')}"><div class="${c('headshot')}" role="img" aria-label="Portrait of ${esc(name)}"></div><h2 class="${c('speaker-name')}">${esc(name)}</h2><p class="${c('company')}">${esc(company)}</p><p class="${c('talk')}">“${esc(talk)}”</p></div>`,
              )
              .join('')}</div>`,
          ),
        );
    }
    send(frame('Page not found', '<p>There is nothing at this address.</p>'), 404);
  });
  await new Promise<void>((resolve) => server.listen(0, BENCH_PAGE_HOST, resolve));
  return {
    url: `http://${BENCH_PAGE_HOST}:${(server.address() as AddressInfo).port}`,
    setCosmetic: (value: boolean) => {
      cosmetic = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
