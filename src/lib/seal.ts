/**
 * Text only the gateway can read back: AES-256-GCM under a gateway key, written as `tg1.` and the
 * base64url of nonce ‖ ciphertext ‖ tag. The tag authenticates the whole, and a purpose label is
 * bound in as associated data, so a sealed text can be neither read, altered nor moved to another
 * use by whoever holds it. What the gateway seals this way: the summary inside the `compaction`
 * item it makes on a translated route (docs/wire-protocols.md §23).
 *
 * The key is 32 bytes; `TOLLGATE_SEAL_KEY` gives it (base64), else each process draws its own and
 * its sealed texts die with it (README, "Compaction").
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** The version prefix of every sealed text. */
export const SEAL_PREFIX = 'tg1.';

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed text that does not open: not ours, altered, or sealed under another key. */
export class UnsealError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsealError';
  }
}

export class Sealer {
  readonly #key: Buffer;

  constructor(key: Uint8Array) {
    if (key.length !== KEY_BYTES) throw new Error(`a seal key is ${KEY_BYTES} bytes, not ${key.length}`);
    this.#key = Buffer.from(key);
  }

  /** A sealer with a key drawn now: what it seals opens only in this process. */
  static withRandomKey(): Sealer {
    return new Sealer(randomBytes(KEY_BYTES));
  }

  /** The key from its base64 text (`TOLLGATE_SEAL_KEY`); throws when it is not 32 bytes of base64. */
  static fromBase64(text: string): Sealer {
    const trimmed = text.trim();
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) throw new Error('the seal key is not base64');
    return new Sealer(Buffer.from(trimmed, 'base64'));
  }

  seal(text: string, purpose: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce);
    cipher.setAAD(Buffer.from(purpose, 'utf8'));
    const sealed = Buffer.concat([nonce, cipher.update(text, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${SEAL_PREFIX}${sealed.toString('base64url')}`;
  }

  /** The text `seal` was given with the same purpose; throws {@link UnsealError} for anything else. */
  open(sealed: string, purpose: string): string {
    if (!isSealed(sealed)) throw new UnsealError('not a sealed text of this gateway');
    const body = sealed.slice(SEAL_PREFIX.length);
    if (!/^[A-Za-z0-9_-]*$/.test(body)) throw new UnsealError('the sealed text is not base64url');
    const bytes = Buffer.from(body, 'base64url');
    if (bytes.length < NONCE_BYTES + TAG_BYTES) throw new UnsealError('the sealed text is too short');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, bytes.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(purpose, 'utf8'));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new UnsealError('the sealed text does not open under this gateway key (altered, or sealed elsewhere)');
    }
  }
}

/** Whether `text` claims to be sealed by a gateway (it may still fail to open). */
export function isSealed(text: string): boolean {
  return text.startsWith(SEAL_PREFIX);
}
