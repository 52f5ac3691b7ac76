import { Button, Center, Paper, Stack, Table, Text, TextInput, Title, UnstyledButton } from '@mantine/core';
import { IconArrowsSort, IconSearch, IconSortAscending, IconSortDescending } from '@tabler/icons-react';
import { type ReactNode, useState } from 'react';

export type Column<T> = { key: string; label: string; render: (row: T) => ReactNode; sortBy?: (row: T) => string | number };

/**
 * A list as a table: sorted by a header's button, filtered by a search box (over `filterBy` of
 * each row), scrolling inside its own box on a narrow screen. Paging is the list's own
 * (`usePagedList`): what the API gives a page at a time is sorted and filtered a page at a time.
 */
export function DataTable<T>({
  label,
  rows,
  columns,
  rowKey,
  filterBy,
  rowLabel,
}: {
  label: string;
  rows: T[];
  columns: Column<T>[];
  rowKey: (row: T) => string;
  filterBy?: (row: T) => string;
  rowLabel?: (row: T) => string;
}) {
  const [sort, setSort] = useState<{ key: string; descending: boolean } | null>(null);
  const [filter, setFilter] = useState('');
  const column = columns.find((candidate) => candidate.key === sort?.key);
  const words = filter.trim().toLowerCase();
  let shown = filterBy && words ? rows.filter((row) => filterBy(row).toLowerCase().includes(words)) : rows;
  if (column?.sortBy) {
    const by = column.sortBy;
    shown = [...shown].sort((a, b) => {
      const [x, y] = [by(a), by(b)];
      const order = x < y ? -1 : x > y ? 1 : 0;
      return sort?.descending ? -order : order;
    });
  }
  return (
    <Stack gap="xs">
      {filterBy && rows.length > 5 && (
        <TextInput
          aria-label={`Filter ${label}`}
          placeholder="Filter…"
          leftSection={<IconSearch size={16} />}
          value={filter}
          onChange={(event) => setFilter(event.currentTarget.value)}
          maw={320}
        />
      )}
      <Table.ScrollContainer minWidth={0} type="native" tabIndex={0}>
        <Table striped highlightOnHover aria-label={label} verticalSpacing="xs">
          <Table.Thead>
            <Table.Tr>
              {columns.map((each) => (
                <Table.Th key={each.key} aria-sort={sort?.key === each.key ? (sort.descending ? 'descending' : 'ascending') : undefined}>
                  {each.sortBy ? (
                    <UnstyledButton
                      onClick={() => setSort({ key: each.key, descending: sort?.key === each.key ? !sort.descending : false })}
                      style={{ display: 'inline-flex', alignItems: 'center', gap: 4, fontWeight: 600 }}
                    >
                      {each.label}
                      {sort?.key !== each.key ? (
                        <IconArrowsSort size={14} aria-hidden />
                      ) : sort.descending ? (
                        <IconSortDescending size={14} aria-hidden />
                      ) : (
                        <IconSortAscending size={14} aria-hidden />
                      )}
                    </UnstyledButton>
                  ) : (
                    each.label
                  )}
                </Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {shown.map((row) => (
              <Table.Tr key={rowKey(row)} aria-label={rowLabel?.(row)}>
                {columns.map((each) => (
                  <Table.Td key={each.key}>{each.render(row)}</Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {shown.length === 0 && (
        <Text size="sm" c="dimmed">
          Nothing matches “{filter}”.
        </Text>
      )}
    </Stack>
  );
}

/** An empty list: what it would hold, what to do next, and (when given) the button that does it. */
export function Empty({ title, text, action }: { title: string; text: string; action?: { label: string; onClick: () => void } }) {
  return (
    <Paper withBorder radius="md" p="xl">
      <Center>
        <Stack gap={6} align="center" maw={420} ta="center">
          <Title order={3} size="h4">
            {title}
          </Title>
          <Text size="sm" c="dimmed">
            {text}
          </Text>
          {action && (
            <Button mt="xs" onClick={action.onClick}>
              {action.label}
            </Button>
          )}
        </Stack>
      </Center>
    </Paper>
  );
}
