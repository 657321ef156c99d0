/**
 * Whether a store error is a unique-constraint violation. The `Store` contract does not name its
 * duplicate error yet, so this recognises the two drivers' own codes: better-sqlite3's
 * `SQLITE_CONSTRAINT_UNIQUE` / `SQLITE_CONSTRAINT_PRIMARYKEY` and PostgreSQL's SQLSTATE `23505`.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}
