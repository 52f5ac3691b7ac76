/**
 * # The held-out set of the analysis benchmark (issue 38)
 *
 * Written on 2026-12-07 (branch r38-heldout) by the team member who had not worked on the
 * proposer, without reading `server/agents/` or how the proposer works inside: only the benchmark
 * harness, the tuned set's `Shape` type, the spec and the API docs. The pages and prompts are new;
 * none is a copy of a tuned page (bench/support/shapes.ts).
 *
 * - `BENCH_SET=heldout npm run bench:analysis` scores it and writes the "Held-out set (issue 38)"
 *   section of docs/benchmarks/analysis.md; the tuned sections are left as they are.
 * - **Do not tune to it.** Nobody changes the proposer after reading these pages or their outcomes
 *   shape by shape. It is scored once, at the end of a change; the next change to the
 *   proposer is scored on a **new** held-out set, written the same way by someone who has not read
 *   the proposer. Once scored, this set is as good as tuned.
 * - 20 shapes, **one prompt each** (20 prompts per model): each shape's prompt is written either with
 *   care (`careful`) or as a hurried user types it (`hurried`), not both.
 * - 14 shapes hold what is asked: definition lists, cards with headings, a table named by its caption
 *   among several, a tab panel filled when opened, an accordion, a list filled after a dropdown's
 *   change, "See more dates", numbered page links, a "Next" button that pages in place, a list that
 *   grows as the window scrolls, nested lists with a qualifier, a form posted before the results, a
 *   list with the values on each item's page, microdata without classes. Some prompts name values by
 *   synonyms (cost for fee, title for name, place for location), some with a qualifier that the page
 *   shows near the data ("fixed-rate bonds", "North West", "kitchen", "electricians").
 * - 6 shapes do not hold what is asked, while something that looks like it is there: mortgage rates
 *   where savings rates are asked, phone numbers where e-mail addresses are, a staff page without
 *   managers, prices in pounds where US dollars are asked, a shop without kitchen appliances, hotels
 *   without ratings. The right outcome there is a loud end.
 * - Expected records are the values as the page shows them, each in its own element (with "£" and
 *   units where the page shows them), in page order; a record holds what the prompt asks for.
 *
 * A check of the pages themselves, which runs no analysis and scores nothing:
 * `node bench/support/checkHeldoutPages.ts` loads each page in Chromium, does what a user would
 * (click, choose, scroll, submit) and asserts that the expected records are on the page, and that
 * the pages without what is asked really lack it.
 */

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Shape } from './shapes.ts';
import { BENCH_PAGE_HOST } from './stack.ts';

// 1. Definition lists, one per plan; the prompt names the fee "monthly cost" and leaves the contract out.
const plans = [
  ['Starter 5', '£8.00', '5 GB', '12 months'],
  ['Everyday 30', '£12.00', '30 GB', '24 months'],
  ['Family 100', '£20.00', '100 GB', '24 months'],
  ['Roam Unlimited', '£27.00', 'Unlimited', '24 months'],
  ['SIM only 10', '£6.50', '10 GB', '1 month'],
];
// 2. Cards with headings; the prompt says "title".
const cottages = [
  ['Brook Cottage', '£140', '4'],
  ['The Old Forge', '£185', '6'],
  ['Heron Lodge', '£95', '2'],
  ['Mill House', '£230', '8'],
  ['Lavender Barn', '£120', '3'],
  ['Quarry View', '£160', '5'],
  ['Wren Cabin', '£85', '2'],
  ['Orchard End', '£175', '6'],
];
// 3. Three tables told apart only by their captions.
const easyAccess = [
  ['Everyday Saver', '3.10%', '£1'],
  ['Online Saver', '3.45%', '£1'],
  ['Young Saver', '4.00%', '£1'],
];
const bonds = [
  ['1 Year Bond', '12 months', '4.15%', '£1,000'],
  ['2 Year Bond', '24 months', '4.05%', '£1,000'],
  ['3 Year Bond', '36 months', '3.95%', '£2,000'],
  ['5 Year Bond', '60 months', '3.80%', '£5,000'],
];
const isas = [
  ['Easy Access ISA', '3.60%', 'Unlimited'],
  ['2 Year Fixed ISA', '4.00%', 'None before maturity'],
];
// 4. A tab whose panel is filled when it is opened.
const bootSizes = [
  ['6', '3'],
  ['7', '0'],
  ['8', '11'],
  ['9', '7'],
  ['10', '5'],
  ['11', '2'],
  ['12', '1'],
];
// 5. An accordion; the panels are in the page, hidden.
const courses: [string, string[][]][] = [
  [
    'Languages',
    [
      ['Spanish for beginners', 'Monday', '£95'],
      ['Conversational French', 'Tuesday', '£110'],
      ['Italian, second year', 'Thursday', '£110'],
    ],
  ],
  [
    'Arts and crafts',
    [
      ['Life drawing', 'Wednesday', '£120'],
      ['Pottery: throwing on the wheel', 'Thursday', '£145'],
      ['Watercolour landscapes', 'Saturday', '£85'],
      ['Bookbinding', 'Tuesday', '£75'],
    ],
  ],
  [
    'Computing',
    [
      ['Spreadsheets made simple', 'Monday', '£60'],
      ['Build your first website', 'Wednesday', '£130'],
    ],
  ],
];
// 6. A list filled after a dropdown's change.
const centres: Record<string, { label: string; rows: string[][] }> = {
  ne: {
    label: 'North East',
    rows: [
      ['Tyneside Plant Barn', 'Gateshead', '0191 496 0012'],
      ['Wear Valley Gardens', 'Bishop Auckland', '01388 960 441'],
    ],
  },
  nw: {
    label: 'North West',
    rows: [
      ['Ribble Garden Centre', 'Preston', '01772 960 118'],
      ['Fellside Nurseries', 'Kendal', '01539 960 207'],
      ['Mersey Greenhouses', 'Warrington', '01925 960 390'],
      ['Pennine Plants', 'Rochdale', '01706 960 554'],
      ['Wirral Seed and Bulb', 'Birkenhead', '0151 496 0873'],
    ],
  },
  mid: {
    label: 'Midlands',
    rows: [
      ['Trent Side Garden Centre', 'Nottingham', '0115 496 0261'],
      ['Arden Nursery', 'Solihull', '0121 496 0738'],
      ['Charnwood Plants', 'Loughborough', '01509 960 142'],
    ],
  },
  sw: {
    label: 'South West',
    rows: [['Tamar Valley Growers', 'Tavistock', '01822 960 615']],
  },
};
// 7. "See more dates" until the button is gone.
const concerts = [
  ['Northern Strings Quartet', 'Fri 8 Jan 2027', 'St Cecilia’s Hall'],
  ['The Copper Kettles', 'Sat 9 Jan 2027', 'Harbour Rooms'],
  ['Anna Lindqvist Trio', 'Thu 14 Jan 2027', 'The Vaults'],
  ['City Youth Orchestra', 'Sun 17 Jan 2027', 'Town Hall'],
  ['Low Tide Brass', 'Fri 22 Jan 2027', 'Harbour Rooms'],
  ['Mara & the Lanterns', 'Sat 23 Jan 2027', 'The Vaults'],
  ['Chamber Choir of St Mary', 'Sun 31 Jan 2027', 'St Cecilia’s Hall'],
  ['Baroque by Candlelight', 'Fri 5 Feb 2027', 'Town Hall'],
  ['Delta Blues Night', 'Sat 6 Feb 2027', 'The Vaults'],
  ['Piano Duos: Schubert', 'Thu 11 Feb 2027', 'St Cecilia’s Hall'],
  ['Folk at the Forge', 'Sat 13 Feb 2027', 'Harbour Rooms'],
  ['Big Band Valentines', 'Sun 14 Feb 2027', 'Town Hall'],
  ['Solo Cello: Bach Suites', 'Fri 19 Feb 2027', 'St Cecilia’s Hall'],
  ['Open Mic Finals', 'Sat 27 Feb 2027', 'The Vaults'],
];
const CONCERTS_FIRST = 5;
const CONCERTS_PER_CLICK = 4;
// 8. Numbered page links.
const cars = [
  ['Ford Fiesta 1.0 Zetec', '2019', '41,200 miles', '£9,495'],
  ['Vauxhall Corsa 1.2 SE', '2018', '52,870 miles', '£7,250'],
  ['Toyota Yaris 1.5 Hybrid', '2021', '18,400 miles', '£14,990'],
  ['Volkswagen Golf 1.5 TSI', '2020', '33,150 miles', '£15,750'],
  ['Nissan Qashqai 1.3 DIG-T', '2019', '47,600 miles', '£13,295'],
  ['Kia Picanto 1.0 2', '2022', '9,870 miles', '£9,990'],
  ['Skoda Octavia 2.0 TDI Estate', '2017', '88,020 miles', '£8,450'],
  ['Honda Jazz 1.3 EX', '2016', '61,300 miles', '£7,995'],
  ['BMW 118i Sport', '2019', '39,500 miles', '£15,250'],
  ['Renault Clio 0.9 TCe', '2018', '44,780 miles', '£7,450'],
  ['Hyundai i30 1.0 T-GDi', '2020', '27,640 miles', '£12,490'],
  ['Mazda CX-3 2.0 SE-L', '2017', '58,910 miles', '£10,750'],
  ['Peugeot 208 1.2 Allure', '2021', '15,230 miles', '£13,100'],
  ['Audi A3 Sportback 30 TFSI', '2019', '36,880 miles', '£16,995'],
  ['Fiat 500 1.2 Lounge', '2017', '29,400 miles', '£6,750'],
  ['Citroën C3 1.2 Shine', '2020', '21,050 miles', '£10,295'],
  ['Dacia Sandero Stepway', '2022', '12,660 miles', '£11,450'],
  ['Volvo V40 D3 R-Design', '2016', '79,300 miles', '£9,250'],
];
const CARS_PER_PAGE = 5;
// 9. A "Next" button that pages in place (the address does not change), disabled on the last page.
const episodes = [
  ['Ep. 16: Why bridges sing', '48 min'],
  ['Ep. 15: The lost rivers of London', '52 min'],
  ['Ep. 14: Salt, a short history', '39 min'],
  ['Ep. 13: Lighthouse keepers', '44 min'],
  ['Ep. 12: Inside a bell foundry', '57 min'],
  ['Ep. 11: Maps that lied', '41 min'],
  ['Ep. 10: The first ten episodes, revisited', '1 h 05 min'],
  ['Ep. 9: Canal boats and their people', '46 min'],
  ['Ep. 8: What the tide leaves', '38 min'],
  ['Ep. 7: Clockmakers', '50 min'],
  ['Ep. 6: Beekeeping on rooftops', '36 min'],
  ['Ep. 5: The street with no name', '42 min'],
  ['Ep. 4: A year of bread', '47 min'],
  ['Ep. 3: Railway ghosts', '53 min'],
  ['Ep. 2: Weather lore', '35 min'],
  ['Ep. 1: Hello, listener', '28 min'],
];
const EPISODES_PER_PAGE = 6;
// 10. A list that grows as the window is scrolled.
const jobs = [
  ['Junior data analyst', 'Pellow & Finch', 'Leeds'],
  ['Warehouse team leader', 'Northgate Logistics', 'Wakefield'],
  ['Staff nurse, night shifts', 'St Anne’s Hospice', 'Harrogate'],
  ['Front-end developer', 'Brightwater Digital', 'Remote'],
  ['Chef de partie', 'The Grain Store', 'York'],
  ['Payroll administrator', 'Holm Accountants', 'Bradford'],
  ['HGV class 1 driver', 'Northgate Logistics', 'Castleford'],
  ['Primary teacher (KS2)', 'Moorside Academy', 'Halifax'],
  ['Customer service adviser', 'Yorvik Energy', 'York'],
  ['Electrical engineer', 'Calder Systems', 'Huddersfield'],
  ['Marketing assistant', 'Pellow & Finch', 'Leeds'],
  ['Site manager', 'Ashby Homes', 'Doncaster'],
  ['Dental receptionist', 'Smile Street Dental', 'Otley'],
  ['Gardener, part time', 'Harewood Estate', 'Harewood'],
  ['Quality inspector', 'Calder Systems', 'Huddersfield'],
  ['Barista', 'Two Rivers Coffee', 'Ilkley'],
  ['IT support technician', 'Moorside Academy', 'Halifax'],
  ['Care assistant', 'St Anne’s Hospice', 'Harrogate'],
  ['Bookkeeper', 'Holm Accountants', 'Bradford'],
  ['Forklift driver', 'Northgate Logistics', 'Wakefield'],
  ['UX researcher', 'Brightwater Digital', 'Remote'],
  ['Sous chef', 'The Grain Store', 'York'],
  ['Plumbing apprentice', 'Ashby Homes', 'Doncaster'],
  ['Library assistant', 'Leeds City Libraries', 'Leeds'],
];
const JOBS_PER_LOAD = 8;
// 11. Nested lists; the prompt's qualifier ("kitchen") is the name of one branch.
const ironmongery: [string, [string, string[][]][]][] = [
  [
    'Kitchen',
    [
      [
        'Hinges',
        [
          ['Soft-close cabinet hinge (pair)', '£6.40'],
          ['Corner cabinet hinge', '£4.10'],
        ],
      ],
      [
        'Handles and knobs',
        [
          ['Brushed steel bar handle, 160 mm', '£3.25'],
          ['Ceramic knob, white', '£2.10'],
          ['Cup pull, antique brass', '£4.80'],
        ],
      ],
      ['Shelving', [['Adjustable shelf pegs (pack of 20)', '£1.95']]],
    ],
  ],
  [
    'Bathroom',
    [
      [
        'Fittings',
        [
          ['Chrome towel ring', '£12.50'],
          ['Toilet roll holder', '£9.99'],
        ],
      ],
    ],
  ],
  [
    'Garden and shed',
    [
      [
        'Gate hardware',
        [
          ['Galvanised gate latch', '£5.60'],
          ['Tee hinge, 300 mm (pair)', '£7.45'],
          ['Padlock hasp and staple', '£3.80'],
        ],
      ],
    ],
  ],
];
// 12. A form posted before the results.
const trades: Record<string, string[][]> = {
  electrician: [
    ['Bright Spark Electrical', '0113 496 0215', '0.8 miles'],
    ['Headingley Rewires', '0113 496 0764', '1.2 miles'],
    ['A. Okafor Electrical Services', '07700 900 318', '2.5 miles'],
    ['Volt & Co', '0113 496 0981', '3.1 miles'],
    ['Kirkstall Electrics', '07700 900 642', '4.0 miles'],
  ],
  plumber: [
    ['Flowright Plumbing', '0113 496 0330', '0.6 miles'],
    ['J. Whitaker & Son', '07700 900 127', '1.9 miles'],
  ],
  roofer: [['Slate & Ridge Roofing', '0113 496 0459', '2.2 miles']],
};
// 13. A list of plots; each plot's size and rent are on its own page.
const plots = [
  ['Plot 1A', 'Cherry Lane', '250 m²', '£62.00', 'Tap at the gate'],
  ['Plot 1B', 'Cherry Lane', '125 m²', '£34.00', 'Tap at the gate'],
  ['Plot 3C', 'Cherry Lane', '250 m²', '£62.00', 'Trough nearby'],
  ['Plot 7', 'Beck Meadow', '300 m²', '£71.50', 'Rainwater only'],
  ['Plot 9A', 'Beck Meadow', '150 m²', '£40.00', 'Trough nearby'],
  ['Plot 12', 'Station Road', '200 m²', '£55.00', 'Tap at the gate'],
];
const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-');
// 14. Microdata and an aria label, no classes; a place's own `itemprop="name"` sits inside each event.
const happenings = [
  ['Winter craft fair', 'Sat 12 Dec, 10:00', 'Corn Exchange'],
  ['Carols on the green', 'Sun 13 Dec, 16:30', 'Village green'],
  ['Repair café', 'Tue 15 Dec, 18:00', 'St John’s church hall'],
  ['Family film: The Snowman', 'Sat 19 Dec, 14:00', 'Regent Cinema'],
  ['Boxing Day swim', 'Sat 26 Dec, 11:00', 'North beach'],
  ['New Year ceilidh', 'Thu 31 Dec, 20:00', 'Corn Exchange'],
  ['Winter bird walk', 'Sun 3 Jan, 08:30', 'Marsh visitor centre'],
];

// The pages without what is asked.
const mortgages = [
  ['2 year fixed, 75% LTV', '4.29%', '6.99% variable', '£999'],
  ['5 year fixed, 75% LTV', '4.09%', '6.99% variable', '£999'],
  ['2 year tracker, 60% LTV', '4.45%', '6.99% variable', '£0'],
  ['10 year fixed, 85% LTV', '4.79%', '6.99% variable', '£1,499'],
];
const surgeryDepartments = [
  ['Appointments', '0161 496 0100', '8:00 to 18:30'],
  ['Prescriptions', '0161 496 0101', '10:00 to 14:00'],
  ['Test results', '0161 496 0102', '14:00 to 16:00'],
  ['Nursing team', '0161 496 0103', '8:30 to 17:00'],
  ['District nurses', '0161 496 0104', '9:00 to 17:00'],
];
const bakers = [
  ['Rosa Lindgren', 'Head baker', '2014'],
  ['Tom Achebe', 'Pastry chef', '2017'],
  ['Priya Nair', 'Counter assistant', '2021'],
  ['Gary Holt', 'Delivery driver', '2019'],
  ['Molly Fenwick', 'Apprentice baker', '2024'],
  ['Jonas Weber', 'Sourdough baker', '2018'],
];
const museumTickets = [
  ['Adult', '£18.00'],
  ['Concession', '£15.50'],
  ['Child (5 to 15)', '£9.00'],
  ['Under 5', 'Free'],
  ['Family (2 adults, 2 children)', '£48.00'],
];
const outlet: [string, string[][]][] = [
  [
    'Garden',
    [
      ['Cordless hedge trimmer', '£79.00'],
      ['Rotary washing line', '£34.99'],
      ['Solar path lights (set of 6)', '£19.50'],
    ],
  ],
  [
    'Bathroom',
    [
      ['Rainfall shower head', '£42.00'],
      ['Heated towel rail', '£115.00'],
    ],
  ],
  [
    'Lighting',
    [
      ['Brass floor lamp', '£89.00'],
      ['Linen pendant shade', '£24.00'],
      ['LED desk lamp', '£29.95'],
    ],
  ],
];
const hotels = [
  ['The Quayside', '£129', '0.3 miles', '42'],
  ['Abbey Gate House', '£98', '0.7 miles', '18'],
  ['Riverside Inn', '£85', '1.1 miles', '12'],
  ['Grand Central', '£165', '0.1 miles', '120'],
  ['Moor End Lodge', '£72', '2.4 miles', '9'],
];

export const heldoutShapes: Shape[] = [
  {
    name: 'definition lists per plan, "cost" for the fee',
    prompts: { hurried: (url) => `${url}/mobile/plans compare the plans - name, monthly cost, how much data` },
    expected: plans.map(([name, fee, data]) => [name as string, fee as string, data as string]),
  },
  {
    name: 'cards with headings, "title" for the name',
    prompts: {
      careful: (url) => `Open ${url}/stays and list every cottage with its title, its price per night and how many guests it sleeps`,
    },
    expected: cottages,
  },
  {
    name: 'three tables, the caption names the one asked for',
    prompts: { careful: (url) => `Go to ${url}/rates and copy the fixed-rate bonds table` },
    expected: bonds,
  },
  {
    name: 'tab panel filled when opened',
    prompts: { hurried: (url) => `how many of each size of the trail boot are in stock? ${url}/shop/trail-boot` },
    expected: bootSizes,
  },
  {
    name: 'accordion of course groups',
    prompts: { careful: (url) => `Open ${url}/evening-classes and list every course with the day it runs and its fee` },
    expected: courses.flatMap(([, rows]) => rows),
  },
  {
    name: 'list filled after a dropdown change',
    prompts: {
      careful: (url) =>
        `On ${url}/garden-centres, find the garden centres in the North West and give me each one's name, town and phone number`,
    },
    expected: centres.nw?.rows ?? [],
  },
  {
    name: '"See more dates" button',
    prompts: { careful: (url) => `Open ${url}/whats-on and list all the upcoming concerts with their date and venue` },
    expected: concerts,
  },
  {
    name: 'numbered page links, cars',
    prompts: { hurried: (url) => `${url}/used-cars every car on all the pages, model year mileage price` },
    expected: cars,
  },
  {
    name: '"Next" button paging in place',
    prompts: { careful: (url) => `Open ${url}/podcast and get the title and length of every episode, on all pages` },
    expected: episodes,
  },
  {
    name: 'list that grows on scroll',
    prompts: { hurried: (url) => `grab all the job ads from ${url}/jobs (title, company, where)` },
    expected: jobs,
  },
  {
    name: 'nested lists, "kitchen" items only',
    prompts: { careful: (url) => `Open ${url}/ironmongery and give me the name and price of every kitchen item` },
    expected: (ironmongery[0]?.[1] ?? []).flatMap(([, rows]) => rows),
  },
  {
    name: 'form posted before the results',
    prompts: {
      careful: (url) =>
        `Open ${url}/find-a-trade, look for electricians near the postcode LS6 2AB and list their names, phone numbers and how far away they are`,
    },
    expected: trades.electrician ?? [],
  },
  {
    name: 'list of plots, values on each plot page',
    prompts: { hurried: (url) => `${url}/allotments for every plot: name, size and yearly rent (they're on each plot's own page)` },
    expected: plots.map(([plot, , size, rent]) => [plot as string, size as string, rent as string]),
  },
  {
    name: 'microdata events without classes, "place" for the venue',
    prompts: { hurried: (url) => `whats on at ${url}/events? name, when and place for each` },
    expected: happenings,
  },
  // The pages without what is asked.
  {
    name: 'savings rates asked, mortgages shown',
    prompts: { careful: (url) => `Open ${url}/home-loans and tell me the interest rate of every savings account` },
    expected: [],
    goalMissing: true,
  },
  {
    name: 'e-mail addresses asked, phones shown',
    prompts: { hurried: (url) => `${url}/surgery/contact email address for each department pls` },
    expected: [],
    goalMissing: true,
  },
  {
    name: 'managers asked, staff without managers',
    prompts: { careful: (url) => `Open ${url}/bakery/team and list the names of the shop managers` },
    expected: [],
    goalMissing: true,
  },
  {
    name: 'prices in US dollars asked, pounds shown',
    prompts: { hurried: (url) => `ticket prices in US dollars ${url}/museum/tickets` },
    expected: [],
    goalMissing: true,
  },
  {
    name: 'kitchen appliances asked, shop without a kitchen section',
    prompts: { careful: (url) => `Open ${url}/outlet and list the kitchen appliances on sale with their prices` },
    expected: [],
    goalMissing: true,
  },
  {
    name: 'star ratings asked, hotels without ratings',
    prompts: { hurried: (url) => `star rating of each hotel on ${url}/hotels` },
    expected: [],
    goalMissing: true,
  },
];

const esc = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Serves the held-out pages on one local site, as `startShapesSite` serves the tuned ones.
 * `setCosmetic(true)` serves the same content, ids, labels and aria attributes with other classes and
 * more wrappers.
 */
export async function startHeldoutSite() {
  let cosmetic = false;
  /** A class attribute's value: another one after the redesign. */
  const c = (name: string) => (cosmetic ? `ui-${name.length}${name}--r2 box` : name);
  const frame = (title: string, body: string, script = '') =>
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${esc(title)}</title><style>body{font-family:sans-serif;margin:0}main{padding:1rem}</style></head><body>${
      cosmetic
        ? `<div class="${c('app')}"><div class="${c('topbar')}"><a href="/">Home</a></div><div class="${c('layout')}"><div class="${c('col')}"><main id="content"><div class="${c('hero')}"><h1>${esc(title)}</h1></div><div class="${c('stack')}">${body}</div></main></div></div><div class="${c('legal')}">© 2026 · Terms · Privacy</div></div>`
        : `<header class="${c('masthead')}"><a href="/">Home</a></header><main id="content"><h1>${esc(title)}</h1>${body}</main><footer class="${c('foot')}">© 2026 · Terms · Privacy</footer>`
    }${script ? `<script>${script}</script>` : ''}</body></html>`;
  const readForm = (req: http.IncomingMessage) =>
    new Promise<URLSearchParams>((resolve) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => resolve(new URLSearchParams(body)));
    });

  // Markup that the pages' scripts add, made here so that it follows the redesign too.
  const concertItem = ([title, date, venue]: string[]) =>
    `<li class="${c('gig')}"><h3 class="${c('gig-title')}">${esc(title as string)}</h3><p class="${c('gig-when')}"><span class="${c('icon')}" aria-hidden="true">▸</span> <time>${esc(date as string)}</time></p><p class="${c('gig-where')}">${esc(venue as string)}</p></li>`;
  const episodeItem = ([title, length]: string[]) =>
    `<li class="${c('episode')}"><a href="#${esc((title as string).split(':')[0] as string)}" class="${c('ep-link')}">${esc(title as string)}</a> <span class="${c('ep-length')}">${esc(length as string)}</span></li>`;
  const jobItem = ([title, company, place]: string[]) =>
    `<div class="${c('job')}" style="min-height:140px"><h2 class="${c('job-title')}">${esc(title as string)}</h2><div class="${c('job-company')}">${esc(company as string)}</div><div class="${c('job-place')}">${esc(place as string)}</div></div>`;
  const centreItem = ([name, town, phone]: string[]) =>
    `<article class="${c('centre')}"><h3>${esc(name as string)}</h3><p class="${c('town')}">${esc(town as string)}</p><p><a href="tel:${(phone as string).replaceAll(' ', '')}">${esc(phone as string)}</a></p></article>`;
  const episodePage = (n: number) => ({
    html: episodes
      .slice((n - 1) * EPISODES_PER_PAGE, n * EPISODES_PER_PAGE)
      .map(episodeItem)
      .join(''),
    page: n,
    pages: Math.ceil(episodes.length / EPISODES_PER_PAGE),
  });

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    const send = (html: string, status = 200) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html);
    };
    const sendJson = (value: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    switch (url.pathname) {
      case '/mobile/plans':
        return send(
          frame(
            'Pay monthly plans',
            `<p>All plans include unlimited texts. Prices include VAT.</p><div class="${c('plan-grid')}">${plans
              .map(
                ([name, fee, data, term], i) =>
                  `<section class="${c('plan')}" aria-labelledby="plan-${i}"><h3 id="plan-${i}">${esc(name as string)}</h3><dl class="${c('plan-facts')}"><div><dt>Monthly fee</dt><dd>${esc(fee as string)}</dd></div><div><dt>Data</dt><dd>${esc(data as string)}</dd></div><div><dt>Contract</dt><dd>${esc(term as string)}</dd></div></dl><a href="#plan-${i}" class="${c('cta')}">Choose this plan</a></section>`,
              )
              .join('')}</div>`,
          ),
        );
      case '/stays':
        return send(
          frame(
            'Cottages in the Dales',
            `<p>Prices are for one night, from.</p><ul class="${c('cards')}" style="list-style:none;display:grid;grid-template-columns:repeat(4,1fr);gap:1rem">${cottages
              .map(
                ([title, price, sleeps]) =>
                  `<li class="${c('card')}"><div class="${c('card-img')}" role="img" aria-label="Photo of ${esc(title as string)}"></div><h2 class="${c('card-title')}"><a href="#${esc(slug(title as string))}">${esc(title as string)}</a></h2><p class="${c('card-meta')}"><span class="${c('label')}">Sleeps</span> <span class="${c('sleeps')}">${sleeps}</span></p><p class="${c('card-price')}"><span class="${c('amount')}">${esc(price as string)}</span> <span class="${c('unit')}">per night</span></p></li>`,
              )
              .join('')}</ul>`,
          ),
        );
      case '/rates': {
        const rateTable = (caption: string, headers: string[], rows: string[][]) =>
          `<table class="${c('rates')}"><caption>${esc(caption)}</caption><tr>${headers.map((header) => `<th scope="col">${esc(header)}</th>`).join('')}</tr>${rows
            .map((row) => `<tr>${row.map((value) => `<td>${esc(value)}</td>`).join('')}</tr>`)
            .join('')}</table>`;
        return send(
          frame(
            'Our rates',
            `<p>Rates last changed on 1 December 2026. AER stands for annual equivalent rate.</p>${rateTable('Easy access savings', ['Account', 'Rate (AER)', 'Open with'], easyAccess)}${rateTable(
              'Fixed-rate bonds',
              ['Bond', 'Term', 'Rate (AER)', 'Minimum deposit'],
              bonds,
            )}${rateTable('Cash ISAs', ['ISA', 'Rate (AER)', 'Withdrawals'], isas)}`,
          ),
        );
      }
      case '/shop/trail-boot':
        return send(
          frame(
            'Fellrunner trail boot',
            `<p class="${c('price')}">£129.00</p><div role="tablist" aria-label="Product details" class="${c('tabs')}"><button role="tab" id="tab-overview" aria-controls="panel-overview" aria-selected="true">Overview</button><button role="tab" id="tab-specs" aria-controls="panel-specs" aria-selected="false">Specifications</button><button role="tab" id="tab-sizes" aria-controls="panel-sizes" aria-selected="false">Sizes &amp; stock</button></div><div role="tabpanel" id="panel-overview" aria-labelledby="tab-overview"><p>A light boot for wet fells, with a grippy sole and a waterproof lining.</p></div><div role="tabpanel" id="panel-specs" aria-labelledby="tab-specs" hidden><table class="${c('specs')}"><tr><th>Weight</th><td>540 g</td></tr><tr><th>Drop</th><td>8 mm</td></tr><tr><th>Lining</th><td>Waterproof membrane</td></tr></table></div><div role="tabpanel" id="panel-sizes" aria-labelledby="tab-sizes" hidden><p>Loading…</p></div>`,
            `const tabs = [...document.querySelectorAll('[role=tab]')];
for (const tab of tabs) tab.addEventListener('click', async () => {
  for (const other of tabs) {
    other.setAttribute('aria-selected', String(other === tab));
    document.getElementById(other.getAttribute('aria-controls')).hidden = other !== tab;
  }
  if (tab.id === 'tab-sizes' && !tab.dataset.loaded) {
    tab.dataset.loaded = '1';
    const sizes = await (await fetch('/shop/trail-boot/stock')).json();
    document.getElementById('panel-sizes').innerHTML = sizes.html;
  }
});`,
          ),
        );
      case '/shop/trail-boot/stock':
        await delay(300);
        return sendJson({
          html: `<table class="${c('stock')}"><thead><tr><th>UK size</th><th>In stock</th></tr></thead><tbody>${bootSizes.map(([size, count]) => `<tr><td>${size}</td><td>${count}</td></tr>`).join('')}</tbody></table>`,
        });
      case '/evening-classes':
        return send(
          frame(
            'Evening classes, spring term',
            `<p>Ten-week courses, starting the week of 11 January.</p><div class="${c('accordion')}">${courses
              .map(
                ([group, rows], i) =>
                  `<h2 class="${c('acc-heading')}"><button type="button" aria-expanded="false" aria-controls="acc-${i}" id="acc-btn-${i}">${esc(group)}</button></h2><div id="acc-${i}" role="region" aria-labelledby="acc-btn-${i}" hidden><ul class="${c('courses')}">${rows
                    .map(
                      ([course, day, fee]) =>
                        `<li><span class="${c('course')}">${esc(course as string)}</span> · <span class="${c('day')}">${esc(day as string)}</span> · <span class="${c('fee')}">${esc(fee as string)}</span></li>`,
                    )
                    .join('')}</ul></div>`,
              )
              .join('')}</div>`,
            `for (const button of document.querySelectorAll('[aria-controls^=acc-]')) button.addEventListener('click', () => {
  const open = button.getAttribute('aria-expanded') === 'true';
  button.setAttribute('aria-expanded', String(!open));
  document.getElementById(button.getAttribute('aria-controls')).hidden = open;
});`,
          ),
        );
      case '/garden-centres':
        return send(
          frame(
            'Find a garden centre',
            `<label for="region">Region</label> <select id="region" name="region"><option value="">Choose a region</option>${Object.entries(
              centres,
            )
              .map(([value, { label }]) => `<option value="${value}">${esc(label)}</option>`)
              .join(
                '',
              )}</select><div id="centres" aria-live="polite" class="${c('results')}"><p>Choose a region to see our centres.</p></div>`,
            `document.getElementById('region').addEventListener('change', async (event) => {
  const box = document.getElementById('centres');
  box.innerHTML = '<p>Loading…</p>';
  const answer = await (await fetch('/garden-centres/list?region=' + encodeURIComponent(event.target.value))).json();
  box.innerHTML = answer.html;
});`,
          ),
        );
      case '/garden-centres/list': {
        await delay(250);
        const region = centres[url.searchParams.get('region') ?? ''];
        return sendJson({
          html: region
            ? `<h2>${esc(region.label)}</h2><div class="${c('centre-list')}">${region.rows.map(centreItem).join('')}</div>`
            : '<p>Choose a region to see our centres.</p>',
        });
      }
      case '/whats-on':
        return send(
          frame(
            'Concerts: what’s on',
            `<ol id="gigs" class="${c('gigs')}">${concerts.slice(0, CONCERTS_FIRST).map(concertItem).join('')}</ol><button type="button" id="more-dates" class="${c('more')}" data-from="${CONCERTS_FIRST}">See more dates</button>`,
            `const more = document.getElementById('more-dates');
more.addEventListener('click', async () => {
  more.disabled = true;
  const answer = await (await fetch('/whats-on/more?from=' + more.dataset.from)).json();
  document.getElementById('gigs').insertAdjacentHTML('beforeend', answer.html);
  if (answer.next === null) more.remove();
  else { more.dataset.from = answer.next; more.disabled = false; }
});`,
          ),
        );
      case '/whats-on/more': {
        await delay(300);
        const from = Number(url.searchParams.get('from') ?? CONCERTS_FIRST);
        const to = from + CONCERTS_PER_CLICK;
        return sendJson({ html: concerts.slice(from, to).map(concertItem).join(''), next: to < concerts.length ? to : null });
      }
      case '/used-cars': {
        const pages = Math.ceil(cars.length / CARS_PER_PAGE);
        const p = Math.min(Math.max(Number(url.searchParams.get('p') ?? '1') || 1, 1), pages);
        return send(
          frame(
            'Used cars',
            `<p class="${c('count')}">${cars.length} cars found · sorted by newest listing</p><div class="${c('listings')}">${cars
              .slice((p - 1) * CARS_PER_PAGE, p * CARS_PER_PAGE)
              .map(
                ([model, year, miles, price]) =>
                  `<article class="${c('listing')}"><h3>${esc(model as string)}</h3><ul class="${c('key-specs')}"><li>${year}</li><li>${miles}</li></ul><div class="${c('listing-price')}">${price}</div></article>`,
              )
              .join('')}</div><ol class="${c('pagination')}">${Array.from(
              { length: pages },
              (_, i) => `<li><a href="/used-cars?p=${i + 1}"${i + 1 === p ? ' aria-current="page"' : ''}>${i + 1}</a></li>`,
            ).join('')}</ol>`,
          ),
        );
      }
      case '/podcast': {
        const first = episodePage(1);
        return send(
          frame(
            'The Small Histories podcast',
            `<p>New episodes every other Tuesday.</p><ul id="episodes" class="${c('episodes')}">${first.html}</ul><div class="${c('paging')}"><button type="button" id="prev" disabled>Previous</button> <span id="where">Page 1 of ${first.pages}</span> <button type="button" id="next">Next</button></div>`,
            `let page = 1;
async function show(n) {
  const answer = await (await fetch('/podcast/episodes?page=' + n)).json();
  page = answer.page;
  document.getElementById('episodes').innerHTML = answer.html;
  document.getElementById('where').textContent = 'Page ' + answer.page + ' of ' + answer.pages;
  document.getElementById('prev').disabled = answer.page === 1;
  document.getElementById('next').disabled = answer.page === answer.pages;
}
document.getElementById('next').addEventListener('click', () => show(page + 1));
document.getElementById('prev').addEventListener('click', () => show(page - 1));`,
          ),
        );
      }
      case '/podcast/episodes': {
        await delay(200);
        const pages = Math.ceil(episodes.length / EPISODES_PER_PAGE);
        return sendJson(episodePage(Math.min(Math.max(Number(url.searchParams.get('page')) || 1, 1), pages)));
      }
      case '/jobs':
        return send(
          frame(
            'Jobs in Yorkshire',
            `<div id="jobs" class="${c('job-list')}" data-from="${JOBS_PER_LOAD}">${jobs.slice(0, JOBS_PER_LOAD).map(jobItem).join('')}</div><p id="jobs-status" class="${c('status')}"></p>`,
            `const list = document.getElementById('jobs');
const status = document.getElementById('jobs-status');
let loading = false, done = false;
window.addEventListener('scroll', async () => {
  if (loading || done || window.innerHeight + window.scrollY < document.body.scrollHeight - 300) return;
  loading = true;
  status.textContent = 'Loading more jobs…';
  const answer = await (await fetch('/jobs/more?from=' + list.dataset.from)).json();
  list.insertAdjacentHTML('beforeend', answer.html);
  if (answer.next === null) { done = true; status.textContent = 'That’s everything for now.'; }
  else { list.dataset.from = answer.next; status.textContent = ''; }
  loading = false;
});`,
          ),
        );
      case '/jobs/more': {
        await delay(300);
        const from = Number(url.searchParams.get('from') ?? JOBS_PER_LOAD);
        const to = from + JOBS_PER_LOAD;
        return sendJson({ html: jobs.slice(from, to).map(jobItem).join(''), next: to < jobs.length ? to : null });
      }
      case '/ironmongery':
        return send(
          frame(
            'Ironmongery by room',
            `<ul class="${c('tree')}">${ironmongery
              .map(
                ([room, groups]) =>
                  `<li><span class="${c('room')}">${esc(room)}</span><ul>${groups
                    .map(
                      ([group, items]) =>
                        `<li><span class="${c('group')}">${esc(group)}</span><ul>${items
                          .map(
                            ([name, price]) =>
                              `<li><span class="${c('item')}">${esc(name as string)}</span> <span class="${c('cost')}">${esc(price as string)}</span></li>`,
                          )
                          .join('')}</ul></li>`,
                    )
                    .join('')}</ul></li>`,
              )
              .join('')}</ul>`,
          ),
        );
      case '/find-a-trade': {
        const form = (postcode: string, trade: string, error = '') =>
          `<form method="post" action="/find-a-trade" class="${c('finder')}">${error ? `<p role="alert" class="${c('error')}">${esc(error)}</p>` : ''}<label for="postcode">Your postcode</label> <input id="postcode" name="postcode" value="${esc(postcode)}" autocomplete="postal-code"> <label for="trade">Trade</label> <select id="trade" name="trade"><option value="">Choose…</option>${Object.keys(
            trades,
          )
            .map(
              (value) =>
                `<option value="${value}"${value === trade ? ' selected' : ''}>${value[0]?.toUpperCase()}${value.slice(1)}s</option>`,
            )
            .join('')}</select> <button type="submit">Find tradespeople</button></form>`;
        if (req.method !== 'POST')
          return send(frame('Find a trusted tradesperson', `<p>Every business here is vetted and reviewed.</p>${form('', '')}`));
        const answer = await readForm(req);
        const postcode = (answer.get('postcode') ?? '').trim();
        const trade = answer.get('trade') ?? '';
        const found = trades[trade];
        if (!postcode || !found)
          return send(
            frame(
              'Find a trusted tradesperson',
              form(postcode, trade, !postcode ? 'Please enter your postcode.' : 'Please choose a trade.'),
            ),
            400,
          );
        return send(
          frame(
            'Find a trusted tradesperson',
            `${form(postcode, trade)}<h2>${found.length} ${esc(trade)}s near ${esc(postcode.toUpperCase())}</h2><table class="${c('trades')}"><thead><tr><th>Business</th><th>Phone</th><th>Distance</th></tr></thead><tbody>${found
              .map(
                ([name, phone, distance]) =>
                  `<tr><td>${esc(name as string)}</td><td>${esc(phone as string)}</td><td>${esc(distance as string)}</td></tr>`,
              )
              .join('')}</tbody></table>`,
          ),
        );
      }
      case '/allotments':
        return send(
          frame(
            'Allotment plots to let',
            `<p>Rents are per year, due each October.</p><ul class="${c('plots')}">${plots
              .map(
                ([plot, site]) =>
                  `<li><a href="/allotments/${slug(plot as string)}">${esc(plot as string)}</a> <span class="${c('site')}">${esc(site as string)} site</span></li>`,
              )
              .join('')}</ul>`,
          ),
        );
      case '/events':
        return send(
          frame(
            'What’s on in town',
            `<ul aria-label="Upcoming events">${happenings
              .map(
                ([name, when, place], i) =>
                  `<li itemscope itemtype="https://schema.org/Event"><a itemprop="url" href="#event-${i}"><span itemprop="name">${esc(name as string)}</span></a><div><time itemprop="startDate" datetime="2026-12-${String(12 + i).padStart(2, '0')}">${esc(when as string)}</time></div><div itemprop="location" itemscope itemtype="https://schema.org/Place"><span itemprop="name">${esc(place as string)}</span></div></li>`,
              )
              .join('')}</ul>`,
          ),
        );
      // The pages without what is asked.
      case '/home-loans':
        return send(
          frame(
            'Home loans',
            `<p>Rates for new customers buying a home or moving their mortgage to us.</p><table class="${c('products')}"><caption>Our mortgage rates</caption><thead><tr><th>Product</th><th>Initial rate</th><th>Then</th><th>Product fee</th></tr></thead><tbody>${mortgages
              .map((row) => `<tr>${row.map((value) => `<td>${esc(value)}</td>`).join('')}</tr>`)
              .join(
                '',
              )}</tbody></table><form class="${c('calculator')}"><h2>How much could you borrow?</h2><label for="income">Yearly income</label> <input id="income" inputmode="numeric"> <button type="button">Calculate</button></form>`,
          ),
        );
      case '/surgery/contact':
        return send(
          frame(
            'Contact the surgery',
            `<p>Moor Lane Medical Practice, 14 Moor Lane, Salford M7 4QT.</p><table class="${c('contacts')}"><thead><tr><th>Department</th><th>Telephone</th><th>Lines open</th></tr></thead><tbody>${surgeryDepartments
              .map((row) => `<tr>${row.map((value) => `<td>${esc(value)}</td>`).join('')}</tr>`)
              .join('')}</tbody></table><p>For urgent help when we are closed, call 111.</p>`,
          ),
        );
      case '/bakery/team':
        return send(
          frame(
            'Meet the bakers',
            `<p>Baking on Castle Street since 1998.</p><div class="${c('people')}">${bakers
              .map(
                ([name, role, since]) =>
                  `<figure class="${c('person')}"><div class="${c('portrait')}" role="img" aria-label="Portrait of ${esc(name as string)}"></div><figcaption><strong>${esc(name as string)}</strong><br><span class="${c('role')}">${esc(role as string)}</span><br><small>With us since ${since}</small></figcaption></figure>`,
              )
              .join('')}</div>`,
          ),
        );
      case '/museum/tickets':
        return send(
          frame(
            'Tickets and opening times',
            `<p>Open every day from 10:00 to 17:00, closed 25 and 26 December.</p><table class="${c('tickets')}"><thead><tr><th>Ticket</th><th>Price</th></tr></thead><tbody>${museumTickets
              .map(([ticket, price]) => `<tr><td>${esc(ticket as string)}</td><td>${esc(price as string)}</td></tr>`)
              .join('')}</tbody></table><p>Members go free. Gift Aid can be added at the desk.</p>`,
          ),
        );
      case '/outlet':
        return send(
          frame(
            'Outlet: last few left',
            outlet
              .map(
                ([section, items]) =>
                  `<section class="${c('outlet-section')}"><h2>${esc(section)}</h2><ul>${items
                    .map(
                      ([name, price]) =>
                        `<li><span class="${c('name')}">${esc(name as string)}</span> <b class="${c('now')}">${esc(price as string)}</b></li>`,
                    )
                    .join('')}</ul></section>`,
              )
              .join(''),
          ),
        );
      case '/hotels':
        return send(
          frame(
            'Hotels near the centre',
            `<p>Prices are per room per night, breakfast included.</p><div class="${c('hotel-list')}">${hotels
              .map(
                ([name, price, distance, rooms]) =>
                  `<article class="${c('hotel')}"><h2>${esc(name as string)}</h2><p><span class="${c('from')}">from</span> <span class="${c('nightly')}">${esc(price as string)}</span></p><p>${esc(distance as string)} from the centre · ${rooms} rooms</p></article>`,
              )
              .join('')}</div>`,
          ),
        );
    }
    if (url.pathname.startsWith('/allotments/')) {
      const plot = plots.find(([name]) => slug(name as string) === url.pathname.split('/')[2]);
      if (plot) {
        const [name, site, size, rent, water] = plot;
        return send(
          frame(
            name as string,
            `<table class="${c('plot-facts')}"><tr><th scope="row">Site</th><td>${esc(site as string)}</td></tr><tr><th scope="row">Size</th><td>${esc(size as string)}</td></tr><tr><th scope="row">Annual rent</th><td>${esc(rent as string)}</td></tr><tr><th scope="row">Water</th><td>${esc(water as string)}</td></tr></table><p><a href="/allotments">Back to all plots</a></p>`,
          ),
        );
      }
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
