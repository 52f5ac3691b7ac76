// r37b: Mantine for the pages of console/src/pages/project/morePages.tsx (until r37a's shell provides it).
import '@mantine/core/styles.css';
import { createTheme, MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';
import './style.css';

// r37b: filled colours and links at shade 8, so white text on them and links on white meet WCAG AA (axe).
const theme = createTheme({ primaryShade: { light: 8, dark: 8 } });

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
    <MantineProvider theme={theme}>
      <QueryClientProvider client={queryClient}>
        <App />
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
