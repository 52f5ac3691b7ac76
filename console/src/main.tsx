// r37b: Mantine for the pages of console/src/pages/project/morePages.tsx (until r37a's shell provides it).
import '@mantine/core/styles.css';
import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';
import './style.css';

const queryClient = new QueryClient({
  defaultOptions: {
    // A 4xx will not mend by asking again; a dropped connection may.
    queries: {
      retry: (failures, error) =>
        failures < 2 && !('data' in (error as object) && (error as { data?: { httpStatus?: number } }).data?.httpStatus),
    },
  },
});

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <MantineProvider>
      <QueryClientProvider client={queryClient}>
        <App />
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
