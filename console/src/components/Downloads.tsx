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
    <section aria-label={`downloads of browser ${resourceId}`}>
      {heading && <h2>Downloads</h2>}
      <Loaded query={list}>
        {(files) =>
          files.length === 0 ? (
            <p className="muted">No downloads.</p>
          ) : (
            <table aria-label="downloads">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Size</th>
                  <th>Type</th>
                  <th>Downloaded</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {files.map((file) => (
                  <tr key={file.id} aria-label={`download ${file.name}`}>
                    <td>
                      <a href={pathOf(file.url)} download={file.name}>
                        {file.name}
                      </a>
                    </td>
                    <td>{sizeOf(file.size)}</td>
                    <td>
                      <code>{file.mimeType}</code>
                    </td>
                    <td>{when(file.created)}</td>
                    <td>
                      <ConfirmButton
                        Button={WriteButton}
                        question={`Delete ${file.name}? This cannot be undone.`}
                        yes="Yes, delete"
                        onConfirm={() => remove.mutate(file.id)}
                        disabled={remove.isPending}
                      >
                        Delete
                      </ConfirmButton>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      <ErrorLine error={remove.error} />
    </section>
  );
}
