import '@mantine/core/styles.css';
import { Alert, createTheme, localStorageColorSchemeManager, MantineProvider, PasswordInput } from '@mantine/core';
import { ModalsProvider } from '@mantine/modals';
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

/**
 * The console's look (docs/console.md): Mantine's, with its primary shade and dimmed text dark
 * enough for WCAG AA contrast in both schemes (axe-checked by the console tests).
 */
const theme = createTheme({
  primaryColor: 'blue',
  primaryShade: { light: 8, dark: 8 },
  defaultRadius: 'md',
  components: {
    // Its toggle's default name ("Toggle password visibility") would also answer to the field's label.
    // An alert's title in the text's colour: the light variant's tinted titles fall short of AA contrast.
    Alert: Alert.extend({ styles: { title: { color: 'var(--mantine-color-text)' } } }),
    PasswordInput: PasswordInput.extend({ defaultProps: { visibilityToggleButtonProps: { 'aria-label': 'Show or hide what is typed' } } }),
  },
});

/** The chosen scheme is kept in this browser (localStorage); Mantine writes it to `<html data-mantine-color-scheme>`. */
const colorSchemeManager = localStorageColorSchemeManager({ key: 'browserflow-color-scheme' });

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <MantineProvider
      theme={theme}
      defaultColorScheme="light"
      colorSchemeManager={colorSchemeManager}
      cssVariablesResolver={() => ({
        variables: {},
        light: { '--mantine-color-dimmed': 'var(--mantine-color-gray-7)', '--mantine-color-error': 'var(--mantine-color-red-9)' },
        dark: { '--mantine-color-dimmed': 'var(--mantine-color-dark-1)', '--mantine-color-error': 'var(--mantine-color-red-3)' },
      })}
    >
      <ModalsProvider>
        <QueryClientProvider client={queryClient}>
          <App />
        </QueryClientProvider>
      </ModalsProvider>
    </MantineProvider>
  </StrictMode>,
);
