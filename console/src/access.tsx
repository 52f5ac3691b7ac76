import { Button, type ButtonProps } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { type ComponentPropsWithoutRef, createContext, type ReactNode, useContext } from 'react';
import { trpc } from './trpc.ts';

/**
 * What the signed-in user may do in the project on screen. The API has no members: a project's
 * owner may change it, and any other signed-in user reaches it only because it is public, to read
 * (server/permissions/permissions.ts). The one place the console decides it; the API decides again.
 */
export type ProjectAccess = { readOnly: boolean; why: string };

const writable: ProjectAccess = { readOnly: false, why: '' };
const Access = createContext<ProjectAccess>(writable);

export function useProjectAccessOf(project: { owner?: string } | undefined): ProjectAccess {
  const auth = useQuery(trpc.auth.status.queryOptions());
  const me = auth.data?.user?.id;
  if (!project || !me || project.owner === me) return writable;
  return { readOnly: true, why: 'Read-only: you are not this project’s owner, so what would change it is turned off.' };
}

export function ProjectAccessProvider({ access, children }: { access: ProjectAccess; children: ReactNode }) {
  return <Access.Provider value={access}>{children}</Access.Provider>;
}

export const useProjectAccess = () => useContext(Access);

/** A button that changes the project: turned off, saying why, for who may only read it. */
export function WriteButton({
  disabled,
  title,
  type = 'button',
  ...props
}: ButtonProps & Omit<ComponentPropsWithoutRef<'button'>, keyof ButtonProps>) {
  const access = useProjectAccess();
  return <Button type={type} {...props} disabled={disabled || access.readOnly} title={access.readOnly ? access.why : title} />;
}
