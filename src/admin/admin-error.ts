/**
 * The one error admin services throw for something the operator can fix: an unknown account, a bad
 * amount, a name already taken. The message is written for a person and safe to print as is; the
 * kind lets the admin HTTP routes pick a status (400, 404, 409) without parsing the message.
 */
export type AdminErrorKind = 'invalid_input' | 'not_found' | 'conflict';

export class AdminError extends Error {
  readonly kind: AdminErrorKind;

  constructor(kind: AdminErrorKind, message: string) {
    super(message);
    this.name = 'AdminError';
    this.kind = kind;
  }
}
