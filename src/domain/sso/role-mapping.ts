import type { OperatorRole } from '../../db/schema.js';

/** Widest first: a user in several mapped groups gets the first of these any of them maps to. */
const WIDEST_FIRST: readonly OperatorRole[] = ['owner', 'admin', 'support', 'auditor'];

/**
 * The groups a claim lists: providers send an array of strings, some a single string or a
 * space-separated one (a claim renamed from `roles`); anything else lists none.
 */
export function groupsOf(claim: unknown): string[] {
  if (Array.isArray(claim)) return claim.filter((g): g is string => typeof g === 'string');
  if (typeof claim === 'string') return claim.split(/\s+/).filter((g) => g !== '');
  return [];
}

/** The role the user's groups map to (the widest of them), or undefined when none is mapped. */
export function roleFor(
  groups: readonly string[],
  map: ReadonlyMap<string, OperatorRole>,
): OperatorRole | undefined {
  const mapped = new Set(groups.flatMap((group) => map.get(group) ?? []));
  return WIDEST_FIRST.find((role) => mapped.has(role));
}
