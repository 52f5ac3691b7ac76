import { Client, Connection, type ConnectionOptions } from '@temporalio/client';

/**
 * The Temporal client the api and domain code start and signal workflows with. It is apart from
 * the workers (server/main/controlWorker.ts, the browser host's own), so a process that only
 * starts workflows loads no activity code.
 * `interceptors` replace the client's own gRPC retries (a test that injects faults passes them with its own).
 */
export async function connectTemporalClient(address: string, namespace: string, interceptors?: ConnectionOptions['interceptors']) {
  const connection = await Connection.connect({ address, interceptors });
  return { client: new Client({ connection, namespace }), close: () => connection.close() };
}
