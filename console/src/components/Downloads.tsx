import { Anchor, Box, Code, Table, Text, Title, VisuallyHidden } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { WriteButton } from '../access.tsx';
import { bf } from '../api.ts';
import { trpc } from '../trpc.ts';
import { ConfirmButton, ErrorLine, Loaded, when } from './parts.tsx';

/** A size as people read it: bytes, KB, MB (powers of 1024). */
export function sizeOf(bytes: number) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
}

/** The file's address on this origin: the API answers with PUBLIC_URL's, which the console's own origin serves too. */
const pathOf = (url: string) => {
  const address = new URL(url, location.origin);
  return `${address.pathname}${address.search}`;
};

type Ids = { slug: string; sessionId: string; resourceId: string };

/**
 * The files a browser downloaded (docs/browsers.md, Downloads), newest first: name, size, MIME
 * type and time, each with a link that fetches it (an attachment) and a delete that asks first.
 * `live`: the browser runs, so the list is read again every few seconds. `heading`: an `h2` above
 * it, and nothing at all while the browser downloaded nothing (a run's page).
 */
export function Downloads({ slug, sessionId, resourceId, live = false, heading = false }: Ids & { live?: boolean; heading?: boolean }) {
  const queries = useQueryClient();
  const input = { project: slug, sessionId, resourceId };
  const list = useQuery(trpc.resources.downloads.queryOptions(input, { refetchInterval: live ? 5_000 : false }));
  const remove = useMutation({
    mutationFn: (downloadId: string) => bf.resources.deleteDownload.mutate({ ...input, downloadId }),
    onSettled: () => queries.invalidateQueries({ queryKey: trpc.resources.downloads.queryKey(input) }),
  });
  if (heading && list.data?.length === 0) return null;
  return (
    <Box component="section" aria-label={`downloads of browser ${resourceId}`}>
      {heading && (
        <Title order={2} size="h3" mb="xs">
          Downloads
        </Title>
      )}
      <Loaded query={list}>
        {(files) =>
          files.length === 0 ? (
            <Text size="sm" c="dimmed">
              No downloads.
            </Text>
          ) : (
            <Table.ScrollContainer minWidth={0} type="native" tabIndex={0}>
              <Table striped aria-label="downloads" verticalSpacing="xs">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Name</Table.Th>
                    <Table.Th>Size</Table.Th>
                    <Table.Th>Type</Table.Th>
                    <Table.Th>Downloaded</Table.Th>
                    <Table.Th>
                      <VisuallyHidden>Actions</VisuallyHidden>
                    </Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {files.map((file) => (
                    <Table.Tr key={file.id} aria-label={`download ${file.name}`}>
                      <Table.Td>
                        <Anchor href={pathOf(file.url)} download={file.name} size="sm" style={{ overflowWrap: 'anywhere' }}>
                          {file.name}
                        </Anchor>
                      </Table.Td>
                      <Table.Td>{sizeOf(file.size)}</Table.Td>
                      <Table.Td>
                        <Code>{file.mimeType}</Code>
                      </Table.Td>
                      <Table.Td>{when(file.created)}</Table.Td>
                      <Table.Td>
                        <ConfirmButton
                          Button={WriteButton}
                          question={`Delete ${file.name}? This cannot be undone.`}
                          yes="Yes, delete"
                          onConfirm={() => remove.mutate(file.id)}
                          disabled={remove.isPending}
                        >
                          Delete
                        </ConfirmButton>
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          )
        }
      </Loaded>
      <ErrorLine error={remove.error} />
    </Box>
  );
}
