import argon2 from 'argon2';

/**
 * Password hashing for dashboard accounts: argon2id with RFC 9106's second recommended setting
 * (64 MiB, 3 passes, 4 lanes), the `argon2` package's default. The hash is a PHC string that
 * carries its own parameters, so raising them later rehashes each password at its next sign-in.
 * Hashing runs on libuv's thread pool, never on the event loop.
 */
const params = { type: argon2.argon2id, memoryCost: 64 * 1024, timeCost: 3, parallelism: 4 } as const;

export const passwordRules = { min: 12, max: 256 } as const;

export const hashPassword = (password: string): Promise<string> => argon2.hash(password, params);

/** A hash of a password nobody has, verified against when the email is unknown, so both cost the same. */
let decoy: Promise<string> | undefined;

/**
 * Whether `password` matches `hash` (or, with no hash, false after the same work). Never throws on
 * a malformed hash: that is a mismatch.
 */
export async function verifyPassword(hash: string | undefined, password: string): Promise<boolean> {
  const against = hash ?? (await (decoy ??= hashPassword(`decoy ${Math.random()}`)));
  try {
    return (await argon2.verify(against, password)) && hash !== undefined;
  } catch {
    return false;
  }
}

/** True when `hash` was made with weaker parameters than today's. */
export const needsRehash = (hash: string): boolean => argon2.needsRehash(hash, params);

/** The rule a new password must meet, or undefined when it does: length only, as NIST SP 800-63B says. */
export function passwordProblem(password: string, email: string): string | undefined {
  const length = [...password].length;
  if (length < passwordRules.min) return `Use at least ${passwordRules.min} characters; a few words are easier to remember than symbols.`;
  if (length > passwordRules.max) return `Use at most ${passwordRules.max} characters.`;
  if (password.trim().toLowerCase() === email) return 'Do not use your email address as your password.';
  return undefined;
}
