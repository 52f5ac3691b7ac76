import {
  ActionIcon,
  Anchor,
  AppShell,
  Box,
  Breadcrumbs,
  Burger,
  Group,
  Menu,
  NavLink,
  ScrollArea,
  Select,
  Text,
  Tooltip,
  UnstyledButton,
  useComputedColorScheme,
  useMantineColorScheme,
} from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import {
  IconBrowser,
  IconChevronDown,
  IconCreditCard,
  IconFolders,
  IconKey,
  IconLogout,
  IconMathFunction,
  IconMoon,
  IconRoute,
  IconServer,
  IconSettings,
  IconSun,
  IconUser,
} from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ComponentType, type ReactNode, useEffect } from 'react';
import { bf } from './api.ts';
import { morePages } from './pages/project/morePages.tsx';
import { hrefOf, type ProjectTab, type Route } from './route.ts';
import { trpc } from './trpc.ts';

/** A project's own sections, in the sidebar's order: its built-in tabs, then `morePages`. */
const projectSections: { key: ProjectTab; label: string; icon: ComponentType<{ size?: number }> }[] = [
  { key: 'sessions', label: 'Sessions', icon: IconBrowser },
  { key: 'pipelines', label: 'Pipelines', icon: IconRoute },
  { key: 'functions', label: 'Functions', icon: IconMathFunction },
  { key: 'settings', label: 'Project settings', icon: IconSettings },
];

/**
 * The console's frame: a header (burger below 48em, breadcrumbs, the theme toggle and the account
 * menu) and a sidebar (logo, project switcher, the project's sections, the account-wide pages).
 */
export function Shell({ route, email, isAdmin, children }: { route: Route; email: string; isAdmin: boolean; children: ReactNode }) {
  const [opened, { toggle, close }] = useDisclosure(false);
  // A link followed on a phone closes the sidebar it was in.
  // biome-ignore lint/correctness/useExhaustiveDependencies: closes on every route change
  useEffect(close, [route]);
  const slug = 'slug' in route ? route.slug : undefined;
  const sectionOf = route.page === 'project' ? route.tab : route.page === 'more' ? route.key : slug ? 'pipelines' : undefined;
  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 250, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" gap="sm" wrap="nowrap">
          <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label={opened ? 'Close the menu' : 'Open the menu'} />
          <Anchor href={hrefOf({ page: 'projects' })} fw={700} c="var(--mantine-color-text)" underline="never" visibleFrom="xs">
            Browserflow
          </Anchor>
          <Box style={{ flex: 1, minWidth: 0 }}>
            <Trail route={route} />
          </Box>
          <ThemeToggle />
          <AccountMenu email={email} />
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="sm" aria-label="console">
        <AppShell.Section>
          <ProjectSwitcher slug={slug} />
        </AppShell.Section>
        <AppShell.Section grow component={ScrollArea} mt="sm">
          {slug && (
            <>
              {projectSections.map(({ key, label, icon: Icon }) => (
                <NavLink
                  key={key}
                  href={hrefOf({ page: 'project', slug, tab: key })}
                  label={label}
                  leftSection={<Icon size={18} />}
                  active={sectionOf === key}
                  aria-current={sectionOf === key ? 'page' : undefined}
                />
              ))}
              {morePages.map(({ key, label, icon: Icon }) => (
                <NavLink
                  key={key}
                  href={hrefOf({ page: 'more', slug, key })}
                  label={label}
                  leftSection={<Icon size={18} />}
                  active={sectionOf === key}
                  aria-current={sectionOf === key ? 'page' : undefined}
                />
              ))}
            </>
          )}
        </AppShell.Section>
        <AppShell.Section>
          <NavLink
            href={hrefOf({ page: 'projects' })}
            label="All projects"
            leftSection={<IconFolders size={18} />}
            active={route.page === 'projects'}
          />
          <NavLink href={hrefOf({ page: 'keys' })} label="API keys" leftSection={<IconKey size={18} />} active={route.page === 'keys'} />
          <NavLink
            href={hrefOf({ page: 'billing' })}
            label="Billing"
            leftSection={<IconCreditCard size={18} />}
            active={route.page === 'billing'}
          />
          {isAdmin && (
            <NavLink
              href={hrefOf({ page: 'hosts' })}
              label="Hosts"
              leftSection={<IconServer size={18} />}
              active={route.page === 'hosts'}
            />
          )}
        </AppShell.Section>
      </AppShell.Navbar>
      <AppShell.Main>
        <Box maw={1400}>{children}</Box>
      </AppShell.Main>
    </AppShell>
  );
}

/** Light or dark, kept in this browser. */
function ThemeToggle() {
  const { setColorScheme } = useMantineColorScheme();
  const scheme = useComputedColorScheme('light');
  const next = scheme === 'dark' ? 'light' : 'dark';
  return (
    <Tooltip label={`Switch to the ${next} theme`}>
      <ActionIcon variant="default" size="lg" aria-label={`Switch to the ${next} theme`} onClick={() => setColorScheme(next)}>
        {scheme === 'dark' ? <IconSun size={18} /> : <IconMoon size={18} />}
      </ActionIcon>
    </Tooltip>
  );
}

/** Who is signed in: their account page, and signing out. */
function AccountMenu({ email }: { email: string }) {
  const queries = useQueryClient();
  const signOut = useMutation({
    mutationFn: () => bf.auth.logout.query(),
    onSuccess: () => queries.resetQueries(),
  });
  return (
    <Menu position="bottom-end" width={240}>
      <Menu.Target>
        <UnstyledButton aria-label={`account ${email}`} style={{ minWidth: 0 }}>
          <Group gap={6} wrap="nowrap">
            <IconUser size={18} />
            <Text size="sm" truncate="end" maw={200} visibleFrom="md">
              {email}
            </Text>
            <IconChevronDown size={14} />
          </Group>
        </UnstyledButton>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Label>{email}</Menu.Label>
        <Menu.Item component="a" href={hrefOf({ page: 'account' })} leftSection={<IconUser size={16} />}>
          Account
        </Menu.Item>
        <Menu.Item leftSection={<IconLogout size={16} />} onClick={() => signOut.mutate()} disabled={signOut.isPending}>
          Sign out
        </Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}

/** The projects one may switch to: one's own, and the one on screen (a public one read by a visitor). */
function ProjectSwitcher({ slug }: { slug: string | undefined }) {
  const mine = useQuery(trpc.projects.list.queryOptions({ my: true, limit: 100, offset: 0 }));
  const options = (mine.data ?? []).map((project) => ({ value: project.slug, label: project.name }));
  if (slug && !options.some((option) => option.value === slug)) options.unshift({ value: slug, label: slug });
  return (
    <Select
      label="Project"
      placeholder="Choose a project"
      data={options}
      value={slug ?? null}
      searchable
      nothingFoundMessage="No such project"
      onChange={(value) => {
        if (value) window.location.hash = hrefOf({ page: 'project', slug: value, tab: 'sessions' });
      }}
    />
  );
}

/** Where the page is, from the route: each step back a link. */
function Trail({ route }: { route: Route }) {
  const slug = 'slug' in route ? route.slug : undefined;
  const project = useQuery({ ...trpc.projects.get.queryOptions({ project: slug ?? '' }), enabled: Boolean(slug) });
  const pipelineId = 'pipelineId' in route ? route.pipelineId : undefined;
  const pipeline = useQuery({
    ...trpc.pipelines.get.queryOptions({ project: slug ?? '', pipelineId: pipelineId ?? '' }),
    enabled: Boolean(slug && pipelineId),
  });
  const steps: { label: string; href?: string }[] = [];
  const top: Partial<Record<Route['page'], string>> = { keys: 'API keys', hosts: 'Hosts', account: 'Account', billing: 'Billing' };
  if (top[route.page]) steps.push({ label: top[route.page] as string });
  else steps.push({ label: 'Projects', href: hrefOf({ page: 'projects' }) });
  if (slug) {
    steps.push({ label: project.data?.name ?? slug, href: hrefOf({ page: 'project', slug, tab: 'sessions' }) });
    if (route.page === 'project') steps.push({ label: projectSections.find((section) => section.key === route.tab)?.label ?? route.tab });
    if (route.page === 'more') steps.push({ label: morePages.find((page) => page.key === route.key)?.label ?? route.key });
    if (pipelineId) {
      steps.push({ label: 'Pipelines', href: hrefOf({ page: 'project', slug, tab: 'pipelines' }) });
      steps.push({ label: pipeline.data?.name ?? 'Pipeline', href: hrefOf({ page: 'pipeline', slug, pipelineId }) });
    }
    if (route.page === 'run') steps.push({ label: `Run ${route.runId.slice(0, 8)}` });
    if (route.page === 'analysis') steps.push({ label: 'Analysis' });
    if (route.page === 'generation') steps.push({ label: 'Generation' });
  }
  // The last step is where one is: not a link.
  const last = steps.length - 1;
  return (
    <Box component="nav" aria-label="breadcrumbs">
      <Breadcrumbs separatorMargin={4} style={{ flexWrap: 'nowrap', overflow: 'hidden' }}>
        {steps.map((step, index) =>
          step.href && index !== last ? (
            <Anchor key={step.label} href={step.href} size="sm" truncate="end" maw={160} visibleFrom={index < last - 1 ? 'sm' : undefined}>
              {step.label}
            </Anchor>
          ) : (
            <Text key={step.label} size="sm" truncate="end" maw={200} aria-current="page">
              {step.label}
            </Text>
          ),
        )}
      </Breadcrumbs>
    </Box>
  );
}
