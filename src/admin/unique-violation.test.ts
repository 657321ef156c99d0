import { describe, expect, it } from 'vitest';
import { isUniqueViolation } from './unique-violation.js';

describe('isUniqueViolation', () => {
  it('recognises SQLite and PostgreSQL unique violations', () => {
    expect(isUniqueViolation(Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' }))).toBe(true);
    expect(isUniqueViolation(Object.assign(new Error('dup'), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' }))).toBe(true);
    expect(isUniqueViolation(Object.assign(new Error('duplicate key value'), { code: '23505' }))).toBe(true);
  });

  it('does not mistake other failures for one', () => {
    expect(isUniqueViolation(Object.assign(new Error('busy'), { code: 'SQLITE_BUSY' }))).toBe(false);
    expect(isUniqueViolation(Object.assign(new Error('not null'), { code: '23502' }))).toBe(false);
    expect(isUniqueViolation(new Error('UNIQUE constraint failed'))).toBe(false);
    expect(isUniqueViolation('23505')).toBe(false);
    expect(isUniqueViolation(null)).toBe(false);
  });
});
