import { createHmac, hkdfSync, randomInt } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { generateSecret, generateURI, verify } from 'otplib';
import { RecoveryCode, User } from '../../db/entities/index.ts';
import { openString, safeEqual, sealString } from './secrets.ts';

/**
 * TOTP (RFC 6238: SHA-1, 6 digits, 30 s, as every authenticator app expects) and recovery codes.
 * A code is accepted once: the time step of the last accepted code is stored, and only later
 * steps pass. One step of clock drift either way is allowed.
 */

const PERIOD_SECONDS = 30;
/** ±1 step: otplib checks every step whose window touches [now − 30 s, now + 30 s]. */
const DRIFT_SECONDS = PERIOD_SECONDS;
export const RECOVERY_CODE_COUNT = 10;
// 12 characters from 31 unambiguous ones: ≈ 59 bits each, out of reach of offline guessing.
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const RECOVERY_LENGTH = 12;

const totpPattern = /^\d{6}$/;

export function newTotpSetup(issuer: string, accountName: string) {
  const secret = generateSecret();
  return { secret, url: generateURI({ issuer, label: accountName, secret }) };
}

const TOTP_PURPOSE = 'totp-secret';

/** What `users.totp_secret` holds: the secret sealed under the service secret, never in clear. */
export function sealTotpSecret(serviceSecret: string, secret: string) {
  return sealString(serviceSecret, TOTP_PURPOSE, secret);
}

const isSealed = (stored: string | null | undefined) => stored?.startsWith('v1.') ?? false;

/**
 * The secret to check codes against. One sealed under another service secret (JWT_SECRET
 * changed) opens to null: no code passes, and a recovery code turns two-factor sign-in off. One
 * stored before secrets were sealed (base32, never starting `v1.`) is read as it is.
 */
function openTotpSecret(serviceSecret: string, stored: string | null | undefined) {
  if (!stored) return null;
  return isSealed(stored) ? openString(serviceSecret, TOTP_PURPOSE, stored) : stored;
}

/** The user with the lazy secret loaded, fresh from the database (the step may have moved). */
export async function loadTwoFactorUser(em: EntityManager, userId: string) {
  return em.findOneOrFail(User, userId, { populate: ['totpSecret'], refresh: true });
}

/**
 * Checks a TOTP code against the user's secret and claims its time step. The claim is a
 * conditional update, so two requests carrying the same code cannot both pass.
 */
export async function acceptTotp(em: EntityManager, serviceSecret: string, user: User, code: string) {
  const secret = openTotpSecret(serviceSecret, user.totpSecret);
  const token = code.replace(/\s+/g, '');
  if (!secret || !totpPattern.test(token)) return false;
  // A last step beyond the latest step a code may have now (the clock went back) leaves no
  // step to accept; otplib would throw on it rather than answer "not valid".
  const latestStep = Math.floor((Date.now() / 1000 + DRIFT_SECONDS) / PERIOD_SECONDS);
  if (user.totpLastStep != null && user.totpLastStep >= latestStep) return false;
  let result: Awaited<ReturnType<typeof verify>>;
  try {
    result = await verify({
      secret,
      token,
      epochTolerance: DRIFT_SECONDS,
      ...(user.totpLastStep == null ? {} : { afterTimeStep: user.totpLastStep }),
    });
  } catch {
    // The token's shape and the step are checked above, so what otplib refuses here is the stored
    // secret (a legacy value that is not base32, or too short or long): no code passes, and a
    // recovery code still turns two-factor sign-in off.
    return false;
  }
  if (!result.valid || !('timeStep' in result)) return false;
  const step = result.timeStep;
  // A secret kept in clear from before sealing is sealed by the first code that passes.
  const sealed = isSealed(user.totpSecret) ? {} : { totpSecret: sealTotpSecret(serviceSecret, secret) };
  const claimed = await em.nativeUpdate(
    User,
    { id: user.id, $or: [{ totpLastStep: null }, { totpLastStep: { $lt: step } }] },
    { totpLastStep: step, ...sealed },
  );
  if (claimed !== 1) return false;
  user.totpLastStep = step;
  return true;
}

/**
 * Recovery codes are stored as an HMAC under a key derived from the service secret, so a copy of
 * the table alone does not let anyone test guesses. The user id is mixed in so equal codes of two
 * users hash apart.
 */
function hashRecoveryCode(serviceSecret: string, userId: string, code: string) {
  return createHmac('sha256', recoveryCodeKey(serviceSecret))
    .update(`${userId}:${normalizeRecoveryCode(code)}`)
    .digest('hex');
}

function recoveryCodeKey(serviceSecret: string) {
  return Buffer.from(hkdfSync('sha256', serviceSecret, 'browserflow-recovery-codes', 'recovery-code', 32));
}

/** How codes issued before the service-secret key were hashed (keyed by the public user id); still accepted. */
function legacyRecoveryCodeHash(userId: string, code: string) {
  return createHmac('sha256', userId).update(normalizeRecoveryCode(code)).digest('hex');
}

function normalizeRecoveryCode(code: string) {
  return code.toLowerCase().replace(/[\s-]+/g, '');
}

export function looksLikeRecoveryCode(code: string) {
  const normalized = normalizeRecoveryCode(code);
  return normalized.length === RECOVERY_LENGTH && [...normalized].every((char) => RECOVERY_ALPHABET.includes(char));
}

/** Replaces the user's recovery codes with ten new ones and returns them (shown this once). */
export async function replaceRecoveryCodes(em: EntityManager, serviceSecret: string, user: User) {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = Array.from({ length: RECOVERY_LENGTH }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]).join('');
    return `${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8)}`;
  });
  await em.nativeDelete(RecoveryCode, { user: user.id });
  for (const code of codes) em.create(RecoveryCode, { user, codeHash: hashRecoveryCode(serviceSecret, user.id, code) });
  await em.flush();
  return codes;
}

/**
 * Uses up one recovery code. Every unused code of the user is compared, in constant time and
 * without stopping at a match, before the match is claimed with a conditional update.
 */
export async function acceptRecoveryCode(em: EntityManager, serviceSecret: string, user: User, code: string) {
  if (!looksLikeRecoveryCode(code)) return false;
  const candidate = hashRecoveryCode(serviceSecret, user.id, code);
  const legacy = legacyRecoveryCodeHash(user.id, code);
  const unused = await em.find(RecoveryCode, { user: user.id, usedAt: null }, { fields: ['id', 'codeHash'] });
  let match: string | undefined;
  for (const row of unused) {
    const current = safeEqual(row.codeHash, candidate);
    const old = safeEqual(row.codeHash, legacy);
    if (current || old) match = row.id;
  }
  if (!match) return false;
  const claimed = await em.nativeUpdate(RecoveryCode, { id: match, usedAt: null }, { usedAt: new Date() });
  return claimed === 1;
}

export function countUnusedRecoveryCodes(em: EntityManager, userId: string) {
  return em.count(RecoveryCode, { user: userId, usedAt: null });
}

/** Turns two-factor sign-in off: the secret and the recovery codes are gone. */
export async function disableTwoFactor(em: EntityManager, user: User) {
  user.totpSecret = null;
  user.twoFactorEnabled = false;
  user.totpLastStep = null;
  await em.nativeDelete(RecoveryCode, { user: user.id });
  await em.flush();
}
