import { v7 } from 'uuid';

/** Opaque, time-ordered global ids: they index well and reveal nothing but their age. */
export function newGlobalId(): string {
  return v7();
}
