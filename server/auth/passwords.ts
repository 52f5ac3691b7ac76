import { hash, verify } from '@node-rs/argon2';

// OWASP's argon2id baseline (m=19 MiB, t=2, p=1): about 16 ms a hash on these machines.
const options = { memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/** Hashed once at start so that an unknown e-mail costs as much as a wrong password. */
let dummyHash: Promise<string> | undefined;

export function hashPassword(password: string) {
  return hash(password, options);
}

export async function verifyPassword(passwordHash: string | null | undefined, password: string) {
  if (!passwordHash) {
    dummyHash ??= hash('not a password', options);
    await verify(await dummyHash, password);
    return false;
  }
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}
