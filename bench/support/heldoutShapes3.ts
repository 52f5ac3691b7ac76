/**
 * # The third held-out set of the analysis benchmark
 *
 * Written on 2026-12-07 (branch h3) by a helper that never opened `server/agents/`,
 * docs/analysis-generation.md nor the discussion of outcomes in docs/benchmarks/analysis.md: only the
 * harness (bench/analysis.ts), the `Shape` type, and the earlier sets' files for their format. The
 * page designs, domains and interaction patterns are new: none copies a tuned page
 * (bench/support/shapes.ts) or a page of the first two held-out sets (bench/support/heldoutShapes.ts,
 * bench/support/heldoutShapes2.ts), whose outcomes are known and so as good as tuned.
 *
 * - `BENCH_SET=heldout3 npm run bench:analysis` scores it and writes the "Held-out set 3" section of
 *   docs/benchmarks/analysis.md; the other sections are left as they are.
 * - **Do not tune to it.** It is scored once, by the integrator, at the end of a change to the
 *   proposer; once scored it is as good as tuned, and the next change needs a new set.
 * - 20 shapes, **two prompts each** (40 prompts per model): one written with care, one as a hurried
 *   user types it.
 * - 15 shapes hold what is asked: a tide table under two rows of merged headers, board games drawn
 *   from a `<template>`, walking routes with JSON-LD beside their cards, exhibitions in a looping
 *   carousel that shows one slide at a time, a virtualised grid of seed varieties, climbing workshops
 *   whose prices are in a modal `<dialog>`, a three-step parcel quote wizard, bike-share stations in a
 *   custom element's shadow DOM, term dates in a same-origin iframe, second-hand records paged by an
 *   `?offset=` query string, planning applications loaded by an infinite-scroll sentinel, race results
 *   grown by a "Load more results" fetch, ski lifts in an ARIA tree that loads each area when it is
 *   expanded, energy tariffs whose column names exist only in `::before` content, and a French
 *   campsite's price list in French number formats.
 * - 5 shapes do not hold what is asked, while something that looks like it is there: the directors of
 *   the films on a cinema's showtimes, the price per kWh of charging sites that list their power in
 *   kW, the average wait on an emergency department's "how busy are we" page, who reported a nature
 *   reserve's bird sightings, and the alcohol content of a wine list. The right outcome there is a loud end.
 * - Expected records are the values as the page shows them, each in its own element, in page order;
 *   a record holds exactly what the prompts ask for.
 *
 * `node bench/support/checkHeldout3Pages.ts` checks the pages themselves (no analysis, no scoring).
 */

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Shape } from './shapes.ts';
import { BENCH_PAGE_HOST } from './stack.ts';

// 1. A tide table: "Date" spans two header rows; "High water" and "Low water" each span two columns.
const tides: [date: string, highTime: string, highHeight: string, lowTime: string, lowHeight: string][] = [
  ['Mon 14 Dec', '05:42', '4.8', '11:58', '1.1'],
  ['Tue 15 Dec', '06:27', '5.0', '12:44', '0.9'],
  ['Wed 16 Dec', '07:11', '5.1', '13:29', '0.8'],
  ['Thu 17 Dec', '07:55', '5.1', '14:13', '0.8'],
  ['Fri 18 Dec', '08:40', '4.9', '14:58', '1.0'],
  ['Sat 19 Dec', '09:27', '4.6', '15:46', '1.3'],
  ['Sun 20 Dec', '10:19', '4.3', '16:40', '1.6'],
];
// 2. A board-game café's shelf, cloned from a <template> by the page's script.
const games: [title: string, players: string, time: string, shelf: string][] = [
  ['Wingspan', '1–5', '40–70 min', 'B2'],
  ['Carcassonne', '2–5', '35 min', 'A1'],
  ['Azul', '2–4', '30–45 min', 'A3'],
  ['Pandemic', '2–4', '45 min', 'C1'],
  ['Codenames', '2–8', '15 min', 'A2'],
  ['Ticket to Ride', '2–5', '30–60 min', 'B1'],
  ['Root', '2–4', '60–90 min', 'C3'],
  ['Sushi Go!', '2–5', '15 min', 'A4'],
  ['Terraforming Mars', '1–5', '120 min', 'C2'],
];
// 3. Walking routes: cards with a definition list each, and the same routes as JSON-LD.
const walks: [name: string, distance: string, ascent: string, grade: string][] = [
  ['Kinder Scout from Edale', '14.2 km', '560 m', 'Strenuous'],
  ['Mam Tor and the Great Ridge', '9.8 km', '420 m', 'Moderate'],
  ['Ladybower reservoir circuit', '8.5 km', '90 m', 'Easy'],
  ['Stanage Edge', '11.1 km', '310 m', 'Moderate'],
  ['Dovedale stepping stones', '5.6 km', '120 m', 'Easy'],
  ['Bleaklow and Higher Shelf Stones', '17.3 km', '690 m', 'Strenuous'],
];
// 4. Exhibitions in a carousel that renders one slide at a time and loops.
const exhibitions: [title: string, dates: string, room: string][] = [
  ['Salt and Silver: Early Photography', '12 September 2026 – 10 January 2027', 'Gallery 2'],
  ['Weaving the Coast', '3 October 2026 – 28 February 2027', 'Textile Hall'],
  ['Hilma af Klint: Paintings for the Future', '21 November 2026 – 5 April 2027', 'Gallery 1'],
  ['Young Printmakers 2026', '28 November 2026 – 17 January 2027', 'Learning Studio'],
  ['The Shape of Sound', '16 January 2027 – 2 May 2027', 'Gallery 3'],
];
// 5. Seed varieties in a virtualised grid: only the rows in view (and two either side) are in the DOM.
const seeds: [variety: string, crop: string, sow: string, days: string][] = [
  ['Boltardy', 'Beetroot', 'Mar–Jul', '90'],
  ['Chioggia', 'Beetroot', 'Apr–Jul', '80'],
  ['Autumn King 2', 'Carrot', 'Mar–Jun', '110'],
  ['Nantes 2', 'Carrot', 'Feb–Jul', '85'],
  ['Purple Haze', 'Carrot', 'Apr–Jun', '95'],
  ['Lettuce All Year Round', 'Lettuce', 'Feb–Aug', '70'],
  ['Little Gem', 'Lettuce', 'Mar–Jul', '60'],
  ['Lollo Rosso', 'Lettuce', 'Mar–Aug', '55'],
  ['Ailsa Craig', 'Onion', 'Jan–Mar', '150'],
  ['Red Baron', 'Onion', 'Feb–Apr', '140'],
  ['Kelvedon Wonder', 'Pea', 'Mar–Jun', '75'],
  ['Hurst Green Shaft', 'Pea', 'Apr–Jun', '80'],
  ['Oregon Sugar Pod', 'Mangetout', 'Apr–Jul', '70'],
  ['Scarlet Emperor', 'Runner bean', 'May–Jun', '90'],
  ['Enorma', 'Runner bean', 'May–Jun', '85'],
  ['Cobra', 'French bean', 'May–Jul', '70'],
  ['Moneymaker', 'Tomato', 'Feb–Apr', '120'],
  ['Sungold', 'Tomato', 'Feb–Apr', '110'],
  ['Gardener’s Delight', 'Tomato', 'Feb–Apr', '115'],
  ['Marketmore', 'Cucumber', 'Apr–May', '65'],
  ['Black Beauty', 'Courgette', 'Apr–Jun', '60'],
  ['Defender', 'Courgette', 'Apr–Jun', '55'],
  ['Crown Prince', 'Squash', 'Apr–May', '120'],
  ['Butternut Waltham', 'Squash', 'Apr–May', '110'],
  ['Bright Lights', 'Chard', 'Mar–Aug', '60'],
  ['Perpetual Spinach', 'Spinach beet', 'Mar–Aug', '55'],
  ['Cavolo Nero', 'Kale', 'Mar–Jun', '90'],
  ['Red Russian', 'Kale', 'Mar–Jul', '80'],
  ['Musselburgh', 'Leek', 'Feb–Apr', '160'],
  ['Giant Winter', 'Leek', 'Mar–Apr', '170'],
  ['French Breakfast 3', 'Radish', 'Mar–Sep', '28'],
  ['Cherry Belle', 'Radish', 'Mar–Sep', '25'],
];
const SEED_ROW_PX = 32;
const SEED_VIEW_PX = 320;
// 6. Climbing workshops; a workshop's price and length are only in the dialog its "View details" opens.
const workshops: [name: string, level: string, price: string, duration: string, starts: string][] = [
  ['Learn to Boulder', 'Beginner', '£45', '2 sessions of 90 minutes', 'Tue 5 Jan 2027'],
  ['Intro to Roped Climbing', 'Beginner', '£95', '4 sessions of 2 hours', 'Sat 9 Jan 2027'],
  ['Lead Climbing Skills', 'Intermediate', '£120', '3 sessions of 2.5 hours', 'Wed 13 Jan 2027'],
  ['Outdoor Sport Climbing Day', 'Intermediate', '£85', '1 day (7 hours)', 'Sun 7 Mar 2027'],
  ['Technique Clinic', 'All levels', '£30', '1 session of 2 hours', 'Thu 7 Jan 2027'],
];
// 7. A parcel quote wizard: destination, then size, then the services and their prices.
const destinations = ['France', 'Germany', 'Spain', 'Italy', 'Poland'];
const sizes: [size: string, note: string][] = [
  ['Small', 'up to 2 kg, 35 × 25 × 10 cm'],
  ['Medium', 'up to 10 kg, 60 × 40 × 30 cm'],
  ['Large', 'up to 20 kg, 100 × 50 × 50 cm'],
];
const services: [service: string, base: number, days: string][] = [
  ['Economy', 9.4, '5–7 working days'],
  ['Standard tracked', 13.9, '3–4 working days'],
  ['Express', 24.5, '1–2 working days'],
];
/** The quote for a destination and a size: each service, its price and its delivery time. */
const quote = (destination: number, size: number) =>
  services.map(([service, base, days]) => [service, `£${(base * (1 + destination * 0.08) * (1 + size * 0.55)).toFixed(2)}`, days]);
const SPAIN = 2;
const MEDIUM = 1;
// 8. Bike-share stations, rendered by a custom element into its open shadow root.
const stations: [name: string, bikes: string, docks: string][] = [
  ['Cathedral Square', '7', '5'],
  ['Riverside Walk', '0', '14'],
  ['University Library', '12', '2'],
  ['Central Station (west)', '4', '16'],
  ['Market Hall', '9', '3'],
  ['Victoria Park Gate', '2', '10'],
  ['Hospital Main Entrance', '6', '6'],
  ['Canal Basin', '11', '1'],
];
// 9. Term dates, in a page of their own shown in a same-origin iframe.
const terms: [term: string, first: string, last: string][] = [
  ['Autumn 1', 'Wednesday 2 September 2026', 'Friday 23 October 2026'],
  ['Autumn 2', 'Monday 2 November 2026', 'Friday 18 December 2026'],
  ['Spring 1', 'Tuesday 5 January 2027', 'Friday 12 February 2027'],
  ['Spring 2', 'Monday 22 February 2027', 'Thursday 25 March 2027'],
  ['Summer 1', 'Monday 12 April 2027', 'Friday 28 May 2027'],
  ['Summer 2', 'Monday 7 June 2027', 'Wednesday 21 July 2027'],
];
// 10. Second-hand records, paged by an `?offset=` query string.
const records: [artist: string, title: string, condition: string, price: string][] = [
  ['Nina Simone', 'Pastel Blues', 'VG+', '£28.00'],
  ['Talking Heads', 'Remain in Light', 'VG', '£22.00'],
  ['Kate Bush', 'Hounds of Love', 'NM', '£35.00'],
  ['Fela Kuti', 'Zombie', 'VG+', '£40.00'],
  ['Joni Mitchell', 'Blue', 'VG', '£26.00'],
  ['The Specials', 'The Specials', 'G+', '£12.00'],
  ['Miles Davis', 'In a Silent Way', 'VG+', '£30.00'],
  ['Portishead', 'Dummy', 'NM', '£45.00'],
  ['Stevie Wonder', 'Innervisions', 'VG', '£24.00'],
  ['Cocteau Twins', 'Heaven or Las Vegas', 'VG+', '£27.50'],
  ['Alice Coltrane', 'Journey in Satchidananda', 'VG', '£38.00'],
  ['New Order', 'Power, Corruption & Lies', 'VG+', '£25.00'],
  ['Massive Attack', 'Blue Lines', 'NM', '£32.00'],
  ['Bob Marley & the Wailers', 'Catch a Fire', 'G+', '£14.00'],
  ['Björk', 'Post', 'VG+', '£29.00'],
  ['The Smiths', 'The Queen Is Dead', 'VG', '£21.00'],
  ['Aretha Franklin', 'Lady Soul', 'VG', '£19.50'],
  ['Brian Eno', 'Music for Airports', 'VG+', '£23.00'],
  ['PJ Harvey', 'Rid of Me', 'NM', '£36.00'],
  ['Curtis Mayfield', 'Superfly', 'VG', '£26.50'],
  ['Sade', 'Diamond Life', 'VG+', '£16.00'],
  ['Can', 'Tago Mago', 'VG', '£34.00'],
  ['Lauryn Hill', 'The Miseducation of Lauryn Hill', 'NM', '£42.00'],
];
const RECORDS_PER_PAGE = 8;
// 11. Planning applications, loaded when a sentinel below the list scrolls into view.
const applications: [reference: string, address: string, proposal: string, status: string][] = [
  ['26/04112/FUL', '18 Granby Row', 'Single-storey rear extension', 'Pending'],
  ['26/04108/LBC', 'The Corn Exchange, Hanging Ditch', 'Replacement of shopfront signage', 'Approved'],
  ['26/04097/FUL', '7 Ashfield Terrace', 'Loft conversion with rear dormer', 'Pending'],
  ['26/04090/TPO', '22 Lime Grove', 'Fell one sycamore (T3)', 'Refused'],
  ['26/04085/FUL', 'Unit 4, Brookside Trading Estate', 'Change of use to a gym', 'Approved'],
  ['26/04079/HH', '61 Chorley Old Road', 'Front porch', 'Approved'],
  ['26/04071/FUL', 'Land adjacent to 3 Mill Lane', 'Erection of two semi-detached houses', 'Pending'],
  ['26/04066/ADV', '140 Deansgate', 'Illuminated fascia sign', 'Approved'],
  ['26/04058/HH', '9 Thornbury Way', 'Garage conversion', 'Withdrawn'],
  ['26/04052/FUL', 'St Bede’s Church Hall', 'Replacement windows', 'Pending'],
  ['26/04047/DEM', 'Former Crown Hotel, Bridge Street', 'Demolition of rear outbuildings', 'Refused'],
  ['26/04039/HH', '33 Kestrel Drive', 'Two-storey side extension', 'Approved'],
  ['26/04031/FUL', '5–7 Oldham Street', 'Flats above existing shops (6 units)', 'Pending'],
  ['26/04026/TPO', 'Beechwood School', 'Crown reduction of two oaks', 'Approved'],
  ['26/04020/HH', '12 Larkhill Close', 'Rear balcony', 'Refused'],
  ['26/04014/FUL', 'Car park, Tib Street', 'Temporary food market (2 years)', 'Pending'],
  ['26/04009/LBC', 'Hulme Hall Lodge', 'Internal alterations', 'Approved'],
  ['26/04003/HH', '48 Parrs Wood Road', 'Dropped kerb and driveway', 'Approved'],
];
const APPLICATIONS_FIRST = 6;
const APPLICATIONS_CHUNK = 4;
// 12. Race results; "Load more results" fetches the next rows as JSON.
const finishers: [position: string, bib: string, name: string, time: string][] = [
  'Abebe Tadesse|1042|2:14:38',
  'Liam O’Connell|311|2:16:02',
  'Sarah Mwangi|1877|2:27:45',
  'Tomás Herrera|522|2:29:10',
  'James Whitfield|88|2:31:07',
  'Hannah Kowalczyk|2001|2:33:19',
  'Rory Fraser|1450|2:35:54',
  'Ines Moreau|764|2:36:31',
  'Daniel Osei|903|2:38:12',
  'Megan Pryce|1312|2:39:48',
  'Kwame Mensah|270|2:41:03',
  'Ellie Sandford|1688|2:42:26',
  'Pavel Novák|1199|2:43:57',
  'Chloe Atkinson|455|2:45:11',
  'Yusra Khalid|1733|2:46:40',
  'Oliver Grant|612|2:47:02',
  'Aoife Byrne|2210|2:48:35',
  'Marcus Lindholm|37|2:49:59',
  'Priyanka Desai|1560|2:51:14',
  'George Tanaka|980|2:52:48',
  'Sofia Romano|1125|2:54:06',
  'Callum Reid|703|2:55:30',
  'Zara Ahmed|1904|2:57:17',
  'Ben Holloway|344|2:58:42',
  'Lucia Ferreira|1621|2:59:58',
  'Nathan Brooks|818|3:01:23',
].map((line, i) => {
  const [name, bib, time] = line.split('|') as [string, string, string];
  return [String(i + 1), bib, name, time];
});
const RESULTS_FIRST = 10;
const RESULTS_MORE = 8;
// 13. Ski lifts in an ARIA tree; an area's lifts are loaded when it is expanded.
const liftAreas: [area: string, lifts: [lift: string, kind: string, status: string][]][] = [
  [
    'Col du Loup',
    [
      ['Loup Express', 'Chairlift, 6 seats', 'Open'],
      ['Petit Loup', 'Drag lift', 'Open'],
      ['Combe Noire', 'Chairlift, 4 seats', 'Closed'],
    ],
  ],
  [
    'Les Rochers',
    [
      ['Télécabine des Rochers', 'Gondola, 10 seats', 'Open'],
      ['Rocher Blanc', 'Chairlift, 4 seats', 'Open'],
    ],
  ],
  [
    'Glacier',
    [
      ['Funiculaire du Glacier', 'Funicular', 'Closed'],
      ['Glacier 3200', 'Drag lift', 'Closed'],
      ['Crevasse', 'Chairlift, 2 seats', 'Closed'],
    ],
  ],
  [
    'Village',
    [
      ['Jardin des Neiges', 'Magic carpet', 'Open'],
      ['Les Pins', 'Drag lift', 'Open'],
    ],
  ],
];
// 14. Energy tariffs: no header row; each cell's column name is only in its `::before` content.
const tariffs: [supplier: string, tariff: string, unitRate: string, standing: string, exitFee: string][] = [
  ['Brightwell Energy', 'Fixed 12M December 2026', '23.41p/kWh', '51.02p/day', '£50'],
  ['Northgrid Power', 'Flexible', '24.86p/kWh', '53.35p/day', '£0'],
  ['Calder Green', 'Green Fixed 24M', '25.12p/kWh', '48.77p/day', '£75'],
  ['Harbour Utilities', 'Tracker', '22.95p/kWh', '55.10p/day', '£0'],
  ['Penrose Energy', 'Saver Fixed 18M', '23.88p/kWh', '49.90p/day', '£60'],
];
// 15. A French campsite's prices, in French with French number formats.
const pitches: [kind: string, low: string, high: string][] = [
  ['Emplacement nu (tente, 2 personnes)', '18,50 €', '27,00 €'],
  ['Emplacement confort avec électricité (10 A)', '24,50 €', '36,90 €'],
  ['Aire camping-car', '14,00 €', '19,00 €'],
  ['Mobil-home 4 personnes', '65,00 €', '119,00 €'],
  ['Chalet bois 6 personnes', '89,00 €', '149,50 €'],
];
const extras: [extra: string, low: string, high: string][] = [
  ['Personne supplémentaire', '5,00 €', '7,50 €'],
  ['Enfant de moins de 7 ans', '2,50 €', '4,00 €'],
  ['Animal (tenu en laisse)', '3,00 €', '3,00 €'],
];

// The pages without what is asked.
const showtimes: [film: string, rating: string, runtime: string, screen: string, times: string[]][] = [
  ['The Lighthouse Keeper’s Daughter', '12A', '1 h 58 min', 'Screen 1', ['13:10', '16:00', '19:20']],
  ['Paddington in Peru', 'PG', '1 h 46 min', 'Screen 2', ['11:00', '13:45', '16:30']],
  ['Midnight at the Lido', '15', '2 h 07 min', 'Screen 3', ['18:40', '21:15']],
  ['Wallace & Gromit: Vengeance Most Fowl', 'PG', '1 h 19 min', 'Screen 2', ['10:15', '12:00']],
  ['Nosferatu', '15', '2 h 12 min', 'Screen 1', ['21:50']],
];
const chargers: [site: string, connectors: string, power: string, bays: string][] = [
  ['Northgate Retail Park', 'CCS, CHAdeMO', '150 kW', '8 bays'],
  ['Leisure Centre car park', 'Type 2', '22 kW', '4 bays'],
  ['Motorway services, junction 19', 'CCS', '350 kW', '12 bays'],
  ['Town Hall', 'Type 2', '7 kW', '2 bays'],
  ['Station Road multi-storey', 'CCS, Type 2', '50 kW', '6 bays'],
];
const departments: [place: string, waiting: string, beingTreated: string][] = [
  ['Royal Infirmary', '34', '51'],
  ['St Anne’s Hospital', '12', '27'],
  ['Westfield Minor Injuries Unit', '9', '6'],
];
const sightings: [species: string, count: string, where: string, date: string][] = [
  ['Bittern', '1', 'Reedbed hide', '7 Dec'],
  ['Marsh harrier', '2', 'Over the north marsh', '7 Dec'],
  ['Kingfisher', '1', 'Pond-dipping platform', '6 Dec'],
  ['Whooper swan', '14', 'Flooded meadow', '6 Dec'],
  ['Bearded tit', '6', 'Reedbed hide', '5 Dec'],
  ['Short-eared owl', '1', 'Sea wall', '5 Dec'],
];
const wines: [wine: string, region: string, glass125: string, glass175: string, bottle: string][] = [
  ['Picpoul de Pinet, Domaine Félines', 'Languedoc, France', '£6.50', '£8.90', '£32.00'],
  ['Albariño, Martín Códax', 'Rías Baixas, Spain', '£7.20', '£9.80', '£36.00'],
  ['Grüner Veltliner, Laurenz V', 'Kamptal, Austria', '£7.00', '£9.50', '£34.00'],
  ['Côtes du Rhône, Guigal', 'Rhône, France', '£6.80', '£9.20', '£33.00'],
  ['Malbec, Zuccardi Serie A', 'Mendoza, Argentina', '£7.50', '£10.20', '£37.00'],
  ['Rioja Reserva, Muga', 'Rioja, Spain', '£9.00', '£12.40', '£46.00'],
];

export const heldoutShapes3: Shape[] = [
  {
    name: 'tide table under merged header rows',
    prompts: {
      careful: (url) =>
        `Open ${url}/tides/port-elsworth and list, for each day in the table, the date with the time and height of high water`,
      hurried: (url) => `${url}/tides/port-elsworth high tide times + heights per day`,
    },
    expected: tides.map(([date, time, height]) => [date, time, height]),
  },
  {
    name: 'board games cloned from a <template>',
    prompts: {
      careful: (url) => `Open ${url}/cafe/games and list every game in the café's library with its number of players and playing time`,
      hurried: (url) => `games at ${url}/cafe/games - name, players, how long`,
    },
    expected: games.map(([title, players, time]) => [title, players, time]),
  },
  {
    name: 'walking routes as cards and JSON-LD',
    prompts: {
      careful: (url) => `Open ${url}/walks/peak-district and give me each walking route's name, distance and total ascent`,
      hurried: (url) => `${url}/walks/peak-district routes w/ distance & ascent`,
    },
    expected: walks.map(([name, distance, ascent]) => [name, distance, ascent]),
  },
  {
    name: 'exhibitions in a looping one-slide carousel',
    prompts: {
      careful: (url) => `Open ${url}/gallery/whats-showing and list every exhibition in the carousel with its title and dates`,
      hurried: (url) => `${url}/gallery/whats-showing all exhibitions + dates`,
    },
    expected: exhibitions.map(([title, dates]) => [title, dates]),
  },
  {
    name: 'seed varieties in a virtualised grid',
    prompts: {
      careful: (url) => `Open ${url}/seeds/varieties and extract every seed variety in the grid with its crop and its sowing months`,
      hurried: (url) => `${url}/seeds/varieties all varieties, crop, when to sow`,
    },
    expected: seeds.map(([variety, crop, sow]) => [variety, crop, sow]),
  },
  {
    name: 'climbing workshops, price and length in a modal dialog',
    prompts: {
      careful: (url) => `Open ${url}/climbing/workshops and list each workshop with its price and how long it lasts`,
      hurried: (url) => `${url}/climbing/workshops workshop, price, duration`,
    },
    expected: workshops.map(([name, , price, duration]) => [name, price, duration]),
  },
  {
    name: 'parcel quote wizard, destination then size',
    prompts: {
      careful: (url) =>
        `Go to ${url}/send-a-parcel and get a quote for a medium parcel to Spain: list each delivery service with its price and delivery time`,
      hurried: (url) => `${url}/send-a-parcel medium parcel to spain, prices per service + how many days`,
    },
    expected: quote(SPAIN, MEDIUM),
  },
  {
    name: 'bike-share stations in a shadow root',
    prompts: {
      careful: (url) => `Open ${url}/bikes/stations and list each docking station with the number of bikes available and free docks`,
      hurried: (url) => `bikes + free docks per station ${url}/bikes/stations`,
    },
    expected: stations,
  },
  {
    name: 'term dates in a same-origin iframe',
    prompts: {
      careful: (url) => `Open ${url}/school/term-dates and list each half term with its first and last day`,
      hurried: (url) => `${url}/school/term-dates term dates (start/end)`,
    },
    expected: terms,
  },
  {
    name: 'second-hand records paged by ?offset=',
    prompts: {
      careful: (url) =>
        `Open ${url}/records/second-hand and list every record for sale across all pages, with the artist, the album title and the price`,
      hurried: (url) => `${url}/records/second-hand every record (all pages): artist / album / price`,
    },
    expected: records.map(([artist, title, , price]) => [artist, title, price]),
  },
  {
    name: 'planning applications behind an infinite-scroll sentinel',
    prompts: {
      careful: (url) =>
        `Open ${url}/planning/applications and extract every planning application in the list, with its reference, the site address and its status`,
      hurried: (url) => `${url}/planning/applications all applications ref + address + status`,
    },
    expected: applications.map(([reference, address, , status]) => [reference, address, status]),
  },
  {
    name: 'race results grown by "Load more results"',
    prompts: {
      careful: (url) =>
        `Open ${url}/results/riverside-marathon and list every finisher in the results with their position, name and finishing time`,
      hurried: (url) => `${url}/results/riverside-marathon full results: pos name time`,
    },
    expected: finishers.map(([position, , name, time]) => [position, name, time]),
  },
  {
    name: 'ski lifts in an ARIA tree loaded per area',
    prompts: {
      careful: (url) =>
        `Open ${url}/resort/lift-status and list every lift in every area, with the area, the lift's name and whether it is open`,
      hurried: (url) => `${url}/resort/lift-status which lifts are open? all areas (area, lift, status)`,
    },
    expected: liftAreas.flatMap(([area, lifts]) => lifts.map(([lift, , status]) => [area, lift, status])),
  },
  {
    name: 'energy tariffs, column names only in ::before',
    prompts: {
      careful: (url) =>
        `Open ${url}/energy/compare and list each tariff with its supplier, the tariff name, the unit rate and the standing charge`,
      hurried: (url) => `${url}/energy/compare supplier tariff unit rate standing charge`,
    },
    expected: tariffs.map(([supplier, tariff, unitRate, standing]) => [supplier, tariff, unitRate, standing]),
  },
  {
    name: 'French campsite prices in French number formats',
    prompts: {
      careful: (url) => `Open ${url}/camping/tarifs and list each type of pitch or rental with its price per night in high season`,
      hurried: (url) => `${url}/camping/tarifs high season nightly price for each pitch type`,
    },
    expected: pitches.map(([kind, , high]) => [kind, high]),
  },
  // The pages without what is asked.
  {
    name: 'directors asked, cinema showtimes without them',
    prompts: {
      careful: (url) => `Open ${url}/cinema/whats-on and list each film showing today with the name of its director`,
      hurried: (url) => `${url}/cinema/whats-on films + who directed them`,
    },
    expected: [],
    goalMissing: true,
  },
  {
    name: 'price per kWh asked, chargers listed with their power',
    prompts: {
      careful: (url) => `Open ${url}/ev/charging-sites and list each charging site with its price per kWh`,
      hurried: (url) => `${url}/ev/charging-sites cost per kwh at each site?`,
    },
    expected: [],
    goalMissing: true,
  },
  {
    name: 'average waiting time asked, emergency departments with patient counts',
    prompts: {
      careful: (url) => `Open ${url}/nhs/emergency-now and give me the average waiting time at each emergency department`,
      hurried: (url) => `avg wait time per A&E ${url}/nhs/emergency-now`,
    },
    expected: [],
    goalMissing: true,
  },
  {
    name: 'observers asked, bird sightings without who saw them',
    prompts: {
      careful: (url) => `Open ${url}/reserve/sightings and list each recent sighting with the name of the person who reported it`,
      hurried: (url) => `${url}/reserve/sightings who spotted each bird? (observer name)`,
    },
    expected: [],
    goalMissing: true,
  },
  {
    name: 'alcohol content asked, wine list without it',
    prompts: {
      careful: (url) => `Open ${url}/wine-bar/list and list each wine with its alcohol percentage (ABV)`,
      hurried: (url) => `${url}/wine-bar/list abv of every wine`,
    },
    expected: [],
    goalMissing: true,
  },
];

const esc = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const slug = (text: string) =>
  text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-');
/** A value for a page's script: JSON that cannot close the script element. */
const scriptValue = (value: unknown) => JSON.stringify(value).replaceAll('<', '\\u003c');

/**
 * Serves the third held-out set's pages on one local site, as `startHeldout2Site` serves the second
 * set's. `setCosmetic(true)` serves the same content, ids, labels, roles and aria attributes with
 * other classes and more wrappers.
 */
export async function startHeldout3Site() {
  let cosmetic = false;
  /** A class attribute's value: another one after the redesign. */
  const c = (name: string) => (cosmetic ? `r${name.length}-${name.split('').reverse().join('')} v` : name);
  const frame = (title: string, body: string, script = '', options: { lang?: string; head?: string } = {}) =>
    `<!doctype html><html lang="${options.lang ?? 'en'}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${esc(title)}</title><style>body{font-family:system-ui,sans-serif;margin:0}main{padding:1rem}</style>${options.head ?? ''}</head><body>${
      cosmetic
        ? `<div class="${c('app')}"><div class="${c('topbar')}"><a href="/">Home</a></div><div class="${c('layout')}"><div class="${c('col')}"><main id="main"><div class="${c('hero')}"><h1>${esc(title)}</h1></div><div class="${c('stack')}"><div class="${c('section')}">${body}</div></div></main></div></div><div class="${c('legal')}">© 2026</div></div>`
        : `<header class="${c('masthead')}"><a href="/">Home</a></header><main id="main"><h1>${esc(title)}</h1>${body}</main><footer class="${c('footer')}">© 2026</footer>`
    }${script ? `<script>${script}</script>` : ''}</body></html>`;

  // Markup that the pages' scripts add, made here so that it follows the redesign too.
  const seedRow = ([variety, crop, sow, days]: (typeof seeds)[number], i: number) =>
    `<div role="row" aria-rowindex="${i + 2}" class="${c('vrow')}" style="position:absolute;left:0;right:0;top:${i * SEED_ROW_PX}px;height:${SEED_ROW_PX}px;display:grid;grid-template-columns:2fr 2fr 1fr 1fr"><div role="gridcell" class="${c('cell-a')}">${esc(variety)}</div><div role="gridcell" class="${c('cell-b')}">${esc(crop)}</div><div role="gridcell" class="${c('cell-c')}">${esc(sow)}</div><div role="gridcell" class="${c('cell-d')}">${esc(days)}</div></div>`;
  const slideHtml = ([title, dates, room]: (typeof exhibitions)[number], i: number) =>
    `<div role="group" aria-roledescription="slide" aria-label="${i + 1} of ${exhibitions.length}" class="${c('slide')}"><div class="${c('slide-art')}" role="img" aria-label="Poster for ${esc(title)}"></div><div class="${c('slide-copy')}"><h2>${esc(title)}</h2><p class="${c('slide-dates')}">${esc(dates)}</p><p class="${c('slide-room')}">${esc(room)}</p><a href="/gallery/exhibitions/${slug(title)}">Find out more</a></div></div>`;
  const quoteHtml = (rows: string[][]) =>
    rows
      .map(
        ([service, price, days]) =>
          `<li class="${c('option')}"><h3>${esc(service as string)}</h3><p class="${c('option-price')}">${esc(price as string)}</p><p class="${c('option-days')}">${esc(days as string)}</p><button type="button">Choose</button></li>`,
      )
      .join('');
  const applicationHtml = ([reference, address, proposal, status]: (typeof applications)[number]) =>
    `<li class="${c('app-item')}"><article><h2 class="${c('app-ref')}"><a href="/planning/applications/${reference.replaceAll('/', '-')}">${esc(reference)}</a></h2><p class="${c('app-address')}">${esc(address)}</p><p class="${c('app-proposal')}">${esc(proposal)}</p><p class="${c('app-status')}">Status: <strong>${esc(status)}</strong></p></article></li>`;
  const finisherRow = ([position, bib, name, time]: (typeof finishers)[number]) =>
    `<tr class="${c('runner')}"><td>${esc(position)}</td><td>${esc(bib)}</td><td>${esc(name)}</td><td><time>${esc(time)}</time></td></tr>`;
  const liftHtml = ([lift, kind, status]: [string, string, string]) =>
    `<li role="treeitem" class="${c('lift')}" tabindex="-1"><span class="${c('lift-name')}">${esc(lift)}</span> <span class="${c('lift-kind')}">${esc(kind)}</span> <span class="${c(`lift-status lift-${status.toLowerCase()}`)}">${esc(status)}</span></li>`;
  const stationHtml = ([name, bikes, docks]: (typeof stations)[number]) =>
    `<li class="${c('station')}"><h3>${esc(name)}</h3><p><data value="${esc(bikes)}">${esc(bikes)}</data> bikes</p><p><data value="${esc(docks)}">${esc(docks)}</data> free docks</p></li>`;

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
      case '/tides/port-elsworth':
        return send(
          frame(
            'Port Elsworth tide times',
            `<p>Times are GMT. Heights are in metres above chart datum.</p><table class="${c('tides')}"><caption>Tide predictions, 14 to 20 December 2026</caption><thead><tr><th rowspan="2" scope="col">Date</th><th colspan="2" scope="colgroup">High water</th><th colspan="2" scope="colgroup">Low water</th></tr><tr><th scope="col">Time</th><th scope="col">Height (m)</th><th scope="col">Time</th><th scope="col">Height (m)</th></tr></thead><tbody>${tides
              .map(
                ([date, ...rest]) => `<tr><th scope="row">${esc(date)}</th>${rest.map((value) => `<td>${esc(value)}</td>`).join('')}</tr>`,
              )
              .join(
                '',
              )}</tbody></table><p class="${c('note')}">Predictions can differ from the real tide by up to 20 minutes in strong winds.</p>`,
          ),
        );
      case '/cafe/games':
        return send(
          frame(
            'Our game library',
            `<p>Play any game for £5 per person. Ask at the bar and we will bring it to your table.</p><ul id="library" class="${c('game-grid')}"></ul><template id="game-card"><li class="${c('game')}"><h3 class="${c('game-title')}"></h3><p class="${c('game-meta')}"><span data-field="players"></span> players · <span data-field="time"></span></p><p class="${c('game-shelf')}">Shelf <span data-field="shelf"></span></p></li></template><script type="application/json" id="games-data">${scriptValue(
              games.map(([title, players, time, shelf]) => ({ title, players, time, shelf })),
            )}</script>`,
            `const template = document.getElementById('game-card');
for (const game of JSON.parse(document.getElementById('games-data').textContent)) {
  const card = template.content.cloneNode(true);
  card.querySelector('h3').textContent = game.title;
  for (const field of ['players', 'time', 'shelf']) card.querySelector('[data-field="' + field + '"]').textContent = game[field];
  document.getElementById('library').append(card);
}`,
          ),
        );
      case '/walks/peak-district':
        return send(
          frame(
            'Walks in the Peak District',
            `<p>Circular routes from a car park or a station. Check the forecast before you set out.</p><div class="${c('walk-list')}">${walks
              .map(
                ([name, distance, ascent, grade]) =>
                  `<article class="${c('walk')}"><div class="${c('map-thumb')}" role="img" aria-label="Map of ${esc(name)}"></div><h2><a href="/walks/${slug(name)}">${esc(name)}</a></h2><dl class="${c('walk-facts')}"><div><dt>Distance</dt><dd>${esc(distance)}</dd></div><div><dt>Ascent</dt><dd>${esc(ascent)}</dd></div><div><dt>Grade</dt><dd>${esc(grade)}</dd></div></dl></article>`,
              )
              .join('')}</div>`,
            '',
            {
              head: `<script type="application/ld+json">${scriptValue({
                '@context': 'https://schema.org',
                '@type': 'ItemList',
                itemListElement: walks.map(([name, distance, ascent, grade], i) => ({
                  '@type': 'ListItem',
                  position: i + 1,
                  item: {
                    '@type': 'TouristTrip',
                    name,
                    url: `/walks/${slug(name)}`,
                    additionalProperty: [
                      { '@type': 'PropertyValue', name: 'Distance', value: distance },
                      { '@type': 'PropertyValue', name: 'Ascent', value: ascent },
                      { '@type': 'PropertyValue', name: 'Grade', value: grade },
                    ],
                  },
                })),
              })}</script>`,
            },
          ),
        );
      case '/gallery/whats-showing':
        return send(
          frame(
            'What’s showing',
            `<p>Free entry to the permanent collection. Open Tuesday to Sunday, 10:00 to 17:00.</p><section aria-roledescription="carousel" aria-label="Exhibitions" class="${c('carousel')}"><div class="${c('carousel-controls')}"><button type="button" id="slide-prev" aria-label="Previous exhibition">‹</button> <button type="button" id="slide-next" aria-label="Next exhibition">›</button></div><div id="slide" aria-live="polite" class="${c('carousel-stage')}">${slideHtml(
              exhibitions[0] as (typeof exhibitions)[number],
              0,
            )}</div></section><h2>Visit</h2><p>The gallery is a ten-minute walk from the station.</p>`,
            `const slides = ${scriptValue(exhibitions.map(slideHtml))};
let at = 0;
const show = (n) => {
  at = (n + slides.length) % slides.length;
  document.getElementById('slide').innerHTML = slides[at];
};
document.getElementById('slide-prev').addEventListener('click', () => show(at - 1));
document.getElementById('slide-next').addEventListener('click', () => show(at + 1));`,
          ),
        );
      case '/seeds/varieties':
        return send(
          frame(
            'Vegetable seed varieties',
            `<p>${seeds.length} varieties in stock. Scroll the grid to see them all.</p><div role="grid" aria-label="Seed varieties" aria-rowcount="${seeds.length + 1}" class="${c('vgrid')}"><div role="rowgroup" class="${c('vgrid-head')}"><div role="row" aria-rowindex="1" style="display:grid;grid-template-columns:2fr 2fr 1fr 1fr"><div role="columnheader">Variety</div><div role="columnheader">Crop</div><div role="columnheader">Sow</div><div role="columnheader">Days to harvest</div></div></div><div id="seed-viewport" class="${c('vgrid-scroll')}" style="height:${SEED_VIEW_PX}px;overflow-y:auto"><div id="seed-rows" role="rowgroup" style="position:relative;height:${seeds.length * SEED_ROW_PX}px"></div></div></div>`,
            `const rows = ${scriptValue(seeds.map(seedRow))};
const viewport = document.getElementById('seed-viewport');
const render = () => {
  const first = Math.max(0, Math.floor(viewport.scrollTop / ${SEED_ROW_PX}) - 2);
  const last = Math.min(rows.length, Math.ceil((viewport.scrollTop + ${SEED_VIEW_PX}) / ${SEED_ROW_PX}) + 2);
  document.getElementById('seed-rows').innerHTML = rows.slice(first, last).join('');
};
viewport.addEventListener('scroll', () => requestAnimationFrame(render));
render();`,
          ),
        );
      case '/climbing/workshops':
        return send(
          frame(
            'Workshops',
            `<p>All kit is included in our workshops. Under-16s climb on the youth programme.</p><ul class="${c('workshop-list')}">${workshops
              .map(
                ([name, level], i) =>
                  `<li class="${c('workshop')}"><h2 id="workshop-${i}">${esc(name)}</h2><p class="${c('level')}">${esc(level)}</p><button type="button" data-workshop="${i}" aria-describedby="workshop-${i}" aria-haspopup="dialog">View details</button></li>`,
              )
              .join(
                '',
              )}</ul><dialog id="workshop-dialog" aria-labelledby="dialog-title" class="${c('modal')}"><h2 id="dialog-title"></h2><dl class="${c('modal-facts')}"><dt>Price</dt><dd id="dialog-price"></dd><dt>Duration</dt><dd id="dialog-duration"></dd><dt>Next date</dt><dd id="dialog-starts"></dd></dl><form method="dialog"><button type="submit">Close</button></form></dialog>`,
            `const workshops = ${scriptValue(workshops)};
const dialog = document.getElementById('workshop-dialog');
for (const button of document.querySelectorAll('[data-workshop]')) button.addEventListener('click', () => {
  const [name, , price, duration, starts] = workshops[Number(button.dataset.workshop)];
  document.getElementById('dialog-title').textContent = name;
  document.getElementById('dialog-price').textContent = price;
  document.getElementById('dialog-duration').textContent = duration;
  document.getElementById('dialog-starts').textContent = starts;
  dialog.showModal();
});`,
          ),
        );
      case '/send-a-parcel':
        return send(
          frame(
            'Send a parcel abroad',
            `<ol class="${c('steps')}" aria-label="Progress"><li id="step-label-1" aria-current="step">Destination</li><li id="step-label-2">Parcel size</li><li id="step-label-3">Prices</li></ol><form id="quote" class="${c('wizard')}"><section id="step-1" aria-labelledby="step-1-h"><h2 id="step-1-h">Where is it going?</h2><label for="destination">Destination country</label> <select id="destination" name="destination" required><option value="">Choose a country</option>${destinations
              .map((country, i) => `<option value="${i}">${esc(country)}</option>`)
              .join(
                '',
              )}</select><p id="destination-error" role="alert" hidden>Choose a country first.</p><button type="button" id="to-step-2">Continue</button></section><section id="step-2" aria-labelledby="step-2-h" hidden><h2 id="step-2-h">How big is it?</h2><fieldset><legend>Parcel size</legend>${sizes
              .map(
                ([size, note], i) =>
                  `<label class="${c('size')}"><input type="radio" name="size" value="${i}"> ${esc(size)} <span class="${c('hint')}">(${esc(note)})</span></label>`,
              )
              .join(
                '',
              )}</fieldset><p id="size-error" role="alert" hidden>Choose a size first.</p><button type="button" id="back-to-1">Back</button> <button type="button" id="to-step-3">See prices</button></section><section id="step-3" aria-labelledby="step-3-h" hidden><h2 id="step-3-h">Prices</h2><p id="quote-summary"></p><ul id="quote-options" class="${c('options')}"></ul><button type="button" id="back-to-2">Back</button></section></form>`,
            `const quotes = ${scriptValue(destinations.map((_, d) => sizes.map((__, s) => quoteHtml(quote(d, s)))))};
const countries = ${scriptValue(destinations)};
const sizeNames = ${scriptValue(sizes.map(([size]) => size.toLowerCase()))};
const go = (n) => {
  for (const i of [1, 2, 3]) {
    document.getElementById('step-' + i).hidden = i !== n;
    if (i === n) document.getElementById('step-label-' + i).setAttribute('aria-current', 'step');
    else document.getElementById('step-label-' + i).removeAttribute('aria-current');
  }
};
document.getElementById('to-step-2').addEventListener('click', () => {
  const chosen = document.getElementById('destination').value !== '';
  document.getElementById('destination-error').hidden = chosen;
  if (chosen) go(2);
});
document.getElementById('back-to-1').addEventListener('click', () => go(1));
document.getElementById('back-to-2').addEventListener('click', () => go(2));
document.getElementById('to-step-3').addEventListener('click', () => {
  const size = document.querySelector('input[name=size]:checked');
  document.getElementById('size-error').hidden = !!size;
  if (!size) return;
  const d = Number(document.getElementById('destination').value);
  document.getElementById('quote-summary').textContent = 'A ' + sizeNames[Number(size.value)] + ' parcel to ' + countries[d] + ', collected from your door.';
  document.getElementById('quote-options').innerHTML = quotes[d][Number(size.value)];
  go(3);
});`,
          ),
        );
      case '/bikes/stations':
        return send(
          frame(
            'Docking stations near you',
            `<p>Live availability, updated every 30 seconds.</p><station-list aria-label="Docking stations"></station-list><p>Bikes cost £1.50 to unlock, then 10p a minute.</p>`,
            `const markup = ${scriptValue(`<style>ul{list-style:none;padding:0;display:grid;grid-template-columns:repeat(2,1fr);gap:8px}li{border:1px solid #ccc;padding:8px}</style><ul class="${c('stations')}">${stations.map(stationHtml).join('')}</ul>`)};
customElements.define('station-list', class extends HTMLElement {
  connectedCallback() {
    if (this.shadowRoot) return;
    this.attachShadow({ mode: 'open' }).innerHTML = markup;
  }
});`,
          ),
        );
      case '/school/term-dates':
        return send(
          frame(
            'Term dates',
            `<p>Our term dates follow the local authority’s calendar, with five INSET days of our own.</p><iframe src="/school/embed/term-dates" title="Term dates 2026 to 2027" class="${c('embed')}" style="width:100%;height:420px;border:0"></iframe><p>Requests for leave in term time go to the head teacher.</p>`,
          ),
        );
      case '/school/embed/term-dates':
        return send(
          `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Term dates 2026 to 2027</title></head><body><div class="${c('embed-body')}"><h2>2026 to 2027</h2><table class="${c('terms')}"><thead><tr><th>Half term</th><th>First day</th><th>Last day</th></tr></thead><tbody>${terms
            .map((row) => `<tr>${row.map((value) => `<td>${esc(value)}</td>`).join('')}</tr>`)
            .join('')}</tbody></table><p>INSET days: 1 September, 4 January, 9 April, 8 June and 22 July.</p></div></body></html>`,
        );
      case '/records/second-hand': {
        const offset = Math.max(Number(url.searchParams.get('offset') ?? '0') || 0, 0);
        const start = Math.min(offset - (offset % RECORDS_PER_PAGE), (Math.ceil(records.length / RECORDS_PER_PAGE) - 1) * RECORDS_PER_PAGE);
        const shown = records.slice(start, start + RECORDS_PER_PAGE);
        const pages = Math.ceil(records.length / RECORDS_PER_PAGE);
        return send(
          frame(
            'Second-hand vinyl',
            `<p class="${c('count')}">Showing ${start + 1}–${start + shown.length} of ${records.length}</p><ul class="${c('crates')}">${shown
              .map(
                ([artist, title, condition, price]) =>
                  `<li class="${c('record')}"><div class="${c('sleeve')}" role="img" aria-label="Sleeve of ${esc(title)}"></div><p class="${c('artist')}">${esc(artist)}</p><h2 class="${c('album')}">${esc(title)}</h2><p class="${c('grading')}">Condition: <abbr title="graded">${esc(condition)}</abbr></p><p class="${c('price')}">${esc(price)}</p></li>`,
              )
              .join('')}</ul><nav aria-label="Results pages" class="${c('pages')}">${
              start > 0 ? `<a href="/records/second-hand?offset=${start - RECORDS_PER_PAGE}" aria-label="Previous page">‹</a> ` : ''
            }<form method="get" action="/records/second-hand"><label for="jump">Page</label> <select id="jump" name="offset">${Array.from(
              { length: pages },
              (_, i) => `<option value="${i * RECORDS_PER_PAGE}"${i * RECORDS_PER_PAGE === start ? ' selected' : ''}>${i + 1}</option>`,
            ).join('')}</select> of ${pages} <button type="submit">Go</button></form>${
              start + RECORDS_PER_PAGE < records.length
                ? ` <a href="/records/second-hand?offset=${start + RECORDS_PER_PAGE}" aria-label="Next page">›</a>`
                : ''
            }</nav>`,
          ),
        );
      }
      case '/planning/applications':
        return send(
          frame(
            'Planning applications received',
            `<p>Applications received in the last 28 days, newest first.</p><ul id="applications" class="${c('app-list')}">${applications
              .slice(0, APPLICATIONS_FIRST)
              .map(applicationHtml)
              .join(
                '',
              )}</ul><div id="list-end" aria-hidden="true" class="${c('sentinel')}" style="height:1px"></div><p id="list-status" role="status" class="${c('list-status')}"></p>`,
            `let next = ${APPLICATIONS_FIRST};
let loading = false;
const sentinel = document.getElementById('list-end');
const load = async () => {
  if (loading || next === null) return;
  loading = true;
  document.getElementById('list-status').textContent = 'Loading more applications…';
  const answer = await (await fetch('/planning/applications/more?from=' + next)).json();
  document.getElementById('applications').insertAdjacentHTML('beforeend', answer.html);
  next = answer.next;
  loading = false;
  if (next === null) {
    observer.disconnect();
    sentinel.remove();
    document.getElementById('list-status').textContent = 'You have reached the end of the list.';
  } else {
    document.getElementById('list-status').textContent = '';
    if (sentinel.getBoundingClientRect().top < innerHeight) load();
  }
};
const observer = new IntersectionObserver((entries) => {
  if (entries.some((entry) => entry.isIntersecting)) load();
});
observer.observe(sentinel);`,
          ),
        );
      case '/planning/applications/more': {
        await delay(200);
        const from = Math.max(Number(url.searchParams.get('from')) || 0, 0);
        const to = from + APPLICATIONS_CHUNK;
        return sendJson({ html: applications.slice(from, to).map(applicationHtml).join(''), next: to < applications.length ? to : null });
      }
      case '/results/riverside-marathon':
        return send(
          frame(
            'Riverside Marathon 2026: results',
            `<p>Chip times. Results are provisional until 1 December.</p><table class="${c('results')}"><thead><tr><th>Pos</th><th>Bib</th><th>Runner</th><th>Chip time</th></tr></thead><tbody id="result-rows">${finishers
              .slice(0, RESULTS_FIRST)
              .map(finisherRow)
              .join(
                '',
              )}</tbody></table><p id="shown-count" aria-live="polite">Showing ${RESULTS_FIRST} of ${finishers.length} finishers</p><button type="button" id="load-more" class="${c('more')}">Load more results</button>`,
            `let cursor = '${RESULTS_FIRST}';
const more = document.getElementById('load-more');
more.addEventListener('click', async () => {
  more.disabled = true;
  const answer = await (await fetch('/results/riverside-marathon/api?cursor=' + cursor)).json();
  document.getElementById('result-rows').insertAdjacentHTML('beforeend', answer.rows.join(''));
  document.getElementById('shown-count').textContent = 'Showing ' + document.querySelectorAll('#result-rows tr').length + ' of ${finishers.length} finishers';
  cursor = answer.cursor;
  if (cursor === null) more.remove();
  else more.disabled = false;
});`,
          ),
        );
      case '/results/riverside-marathon/api': {
        await delay(200);
        const from = Math.max(Number(url.searchParams.get('cursor')) || 0, 0);
        const to = from + RESULTS_MORE;
        return sendJson({ rows: finishers.slice(from, to).map(finisherRow), cursor: to < finishers.length ? String(to) : null });
      }
      case '/resort/lift-status':
        return send(
          frame(
            'Lift status',
            `<p>Updated at 08:45. Expand an area to see its lifts.</p><ul role="tree" aria-label="Lifts by area" class="${c('tree')}">${liftAreas
              .map(
                ([area], i) =>
                  `<li role="treeitem" aria-expanded="false" tabindex="${i === 0 ? 0 : -1}" data-area="${i}" class="${c('area')}"><span class="${c('twisty')}" aria-hidden="true">▸</span> <span class="${c('area-name')}">${esc(area)}</span><ul role="group" class="${c('lifts')}"></ul></li>`,
              )
              .join('')}</ul>`,
            `const areas = [...document.querySelectorAll('[data-area]')];
const toggle = async (item, open) => {
  if ((item.getAttribute('aria-expanded') === 'true') === open) return;
  item.setAttribute('aria-expanded', String(open));
  item.querySelector('[aria-hidden]').textContent = open ? '▾' : '▸';
  const group = item.querySelector('[role=group]');
  if (!open) { group.innerHTML = ''; return; }
  item.setAttribute('aria-busy', 'true');
  const answer = await (await fetch('/resort/lift-status/area?i=' + item.dataset.area)).json();
  group.innerHTML = answer.html;
  item.setAttribute('aria-busy', 'false');
};
for (const item of areas) {
  item.querySelector('span:nth-of-type(2)').addEventListener('click', () => toggle(item, item.getAttribute('aria-expanded') !== 'true'));
  item.querySelector('span:nth-of-type(1)').addEventListener('click', () => toggle(item, item.getAttribute('aria-expanded') !== 'true'));
  item.addEventListener('keydown', (event) => {
    if (event.target !== item) return;
    const i = areas.indexOf(item);
    if (event.key === 'ArrowRight' || event.key === 'Enter') toggle(item, true);
    else if (event.key === 'ArrowLeft') toggle(item, false);
    else if (event.key === 'ArrowDown' && areas[i + 1]) areas[i + 1].focus();
    else if (event.key === 'ArrowUp' && areas[i - 1]) areas[i - 1].focus();
    else return;
    event.preventDefault();
  });
}`,
          ),
        );
      case '/resort/lift-status/area': {
        await delay(150);
        const area = liftAreas[Number(url.searchParams.get('i'))];
        return sendJson({ html: (area?.[1] ?? []).map(liftHtml).join('') });
      }
      case '/energy/compare':
        return send(
          frame(
            'Compare energy tariffs',
            `<p>Prices for electricity only, for a home using 2,700 kWh a year in the North West, including VAT.</p><table class="${c('tariff-cards')}"><caption>${tariffs.length} tariffs available to switch to today</caption><tbody>${tariffs
              .map(
                (row) =>
                  `<tr class="${c('tariff')}">${row
                    .map(
                      (value, i) =>
                        `<td data-label="${['Supplier', 'Tariff', 'Unit rate', 'Standing charge', 'Exit fee'][i]}">${esc(value)}</td>`,
                    )
                    .join('')}<td><a href="/energy/switch/${slug(row[0])}">Switch</a></td></tr>`,
              )
              .join('')}</tbody></table>`,
            '',
            {
              head: '<style>td[data-label]::before{content:attr(data-label) ": ";font-weight:600;margin-right:.25em}td{display:block}tr{display:block;border:1px solid #ccc;margin:.5rem 0;padding:.5rem}</style>',
            },
          ),
        );
      case '/camping/tarifs':
        return send(
          frame(
            'Tarifs 2027',
            `<p>Prix par nuit, TVA comprise. Basse saison : avril à juin et septembre. Haute saison : juillet et août.</p><table class="${c('tarifs')}"><caption>Emplacements et locations</caption><thead><tr><th scope="col">Hébergement</th><th scope="col">Basse saison</th><th scope="col">Haute saison</th></tr></thead><tbody>${pitches
              .map(([kind, low, high]) => `<tr><th scope="row">${esc(kind)}</th><td>${esc(low)}</td><td>${esc(high)}</td></tr>`)
              .join(
                '',
              )}</tbody></table><table class="${c('tarifs')}"><caption>Suppléments par nuit</caption><thead><tr><th scope="col">Supplément</th><th scope="col">Basse saison</th><th scope="col">Haute saison</th></tr></thead><tbody>${extras
              .map(([extra, low, high]) => `<tr><th scope="row">${esc(extra)}</th><td>${esc(low)}</td><td>${esc(high)}</td></tr>`)
              .join(
                '',
              )}</tbody></table><p>Taxe de séjour : 0,66 € par adulte et par nuit. Location d’une semaine minimum en juillet et août (1 043,00 € la semaine pour un mobil-home).</p>`,
            '',
            { lang: 'fr' },
          ),
        );
      // The pages without what is asked.
      case '/cinema/whats-on':
        return send(
          frame(
            'What’s on today',
            `<p>Monday 7 December. Book online or at the box office.</p>${showtimes
              .map(
                ([film, rating, runtime, screen, times]) =>
                  `<section class="${c('film')}"><h2>${esc(film)}</h2><p class="${c('film-meta')}"><span>${esc(rating)}</span> · <span>${esc(runtime)}</span> · <span>${esc(screen)}</span></p><ul class="${c('times')}">${times
                    .map((time) => `<li><a href="/cinema/book/${slug(film)}/${time.replace(':', '')}">${esc(time)}</a></li>`)
                    .join('')}</ul></section>`,
              )
              .join('')}`,
          ),
        );
      case '/ev/charging-sites':
        return send(
          frame(
            'Public charging sites',
            `<p>Rapid and fast chargers run by the council. Contactless at every bay.</p><table class="${c('chargers')}"><thead><tr><th>Site</th><th>Connectors</th><th>Maximum power</th><th>Bays</th></tr></thead><tbody>${chargers
              .map((row) => `<tr>${row.map((value) => `<td>${esc(value)}</td>`).join('')}</tr>`)
              .join('')}</tbody></table>`,
          ),
        );
      case '/nhs/emergency-now':
        return send(
          frame(
            'Emergency departments: how busy are we?',
            `<p>Updated at 14:32. If it is not an emergency, call 111.</p><table class="${c('busy')}"><thead><tr><th>Department</th><th>Patients waiting to be seen</th><th>Patients being treated</th></tr></thead><tbody>${departments
              .map((row) => `<tr>${row.map((value) => `<td>${esc(value)}</td>`).join('')}</tr>`)
              .join('')}</tbody></table>`,
          ),
        );
      case '/reserve/sightings':
        return send(
          frame(
            'Recent sightings',
            `<p>What has been seen on the reserve this week. Hides open from dawn to dusk.</p><ul class="${c('sightings')}">${sightings
              .map(
                ([species, count, where, date]) =>
                  `<li><h2>${esc(species)}</h2><p class="${c('sighting-meta')}"><span>${esc(count)}</span> · <span>${esc(where)}</span> · <time>${esc(date)}</time></p></li>`,
              )
              .join('')}</ul>`,
          ),
        );
      case '/wine-bar/list':
        return send(
          frame(
            'Wine list',
            `<p>Every wine is available by the glass.</p><table class="${c('wines')}"><thead><tr><th>Wine</th><th>Region</th><th>125 ml</th><th>175 ml</th><th>Bottle</th></tr></thead><tbody>${wines
              .map((row) => `<tr>${row.map((value) => `<td>${esc(value)}</td>`).join('')}</tr>`)
              .join('')}</tbody></table>`,
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
