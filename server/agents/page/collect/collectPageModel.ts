import type { PageModel } from '../pageModel.ts';
import { readButtons } from './buttons.ts';
import { readControls } from './controls.ts';
import { readDetails } from './details.ts';
import { readForms } from './forms.ts';
import { readHeadings } from './headings.ts';
import { readLinks, visibleAnchors } from './links.ts';
import { readLists } from './lists.ts';
import { readNavigation } from './navigation.ts';
import { readPagination } from './pagination.ts';
import { readTables } from './tables.ts';
import { clean } from './text.ts';

/**
 * The page model of the document it runs in. The pager found first is left out of the
 * navigation, the links and the lists; the lists' items are left out of the details.
 */
export function collectPageModel(): PageModel {
  const headings = readHeadings();
  const forms = readForms();
  const buttons = readButtons();
  const anchors = visibleAnchors(document);
  const { pagination, pager, control } = readPagination(anchors);
  const navigation = readNavigation(pager);
  const links = readLinks(anchors, pager, navigation);
  const tables = readTables();
  const { lists, seen } = readLists(pager, control);
  const details = readDetails(seen);
  return {
    url: location.href,
    title: clean(document.title),
    headings,
    forms,
    buttons,
    links,
    navigation,
    pagination,
    tables,
    lists,
    details,
    controls: readControls(),
  };
}
