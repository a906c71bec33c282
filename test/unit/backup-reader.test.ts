import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealingAt } from '../../src/domain/backup/encryption.js';
import { BOUND_MS, BoundedReader, type Outcome } from '../support/bounded-reader.js';

// The backup reader on files anyone could have written: an unencrypted backup's trailer proves no
// origin (whoever alters it recomputes the checksum), so every manifest field, part entry, header
// and trailer here is made up, and each file's checksum is made to match. Every input must end
// within BOUND_MS (the reader runs in a worker the test ends when its timer wins: a reader spinning
// on a fraction of a byte never yields to a timer of its own thread), and a refusal names the
// field or part it is about.

const MAGIC = 'KEYWARD-BACKUP 1\n';
const TRAILER = '\nKEYWARD-END ';
const NAMES = ['database', 'runtime-keys.json', 'admin.key'] as const;
const LONG = { timeout: 180_000 };

let scratch: string;
const reader = new BoundedReader();
beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-reader-'));
});
afterAll(async () => {
  await reader.close();
  fs.rmSync(scratch, { recursive: true, force: true });
});

interface Part {
  name: string;
  bytes: Buffer;
}

interface Crafted {
  header?: unknown;
  /** The manifest's line: a value written as JSON, or the raw text itself. */
  manifest: unknown;
  rawManifest?: string;
  parts: readonly Part[];
  /** Fields laid over the trailer a writer would give. */
  trailer?: Record<string, unknown>;
}

/** A backup file as anyone could write one: the trailer's length and checksum made to match. */
function craft(c: Crafted): Buffer {
  const head = Buffer.from(`${MAGIC}${JSON.stringify(c.header ?? { encryption: null })}\n`);
  const line = c.rawManifest ?? JSON.stringify(c.manifest);
  const body = Buffer.concat([Buffer.from(`${line}\n`), ...c.parts.map((p) => p.bytes)]);
  const sha256 = createHash('sha256').update(head).update(body).digest('hex');
  const trailer = JSON.stringify({ bodyBytes: body.length, sha256, ...c.trailer });
  return Buffer.concat([head, body, Buffer.from(`${TRAILER}${trailer}\n`)]);
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function manifestOf(parts: readonly Part[]): Record<string, unknown> {
  return {
    format: 1,
    keywardVersion: '0.1.0',
    database: 'embedded',
    databaseFormat: 'pglite-datadir',
    migrations: ['0001_initial', '0002_more'],
    createdAt: '2025-01-31T12:00:00.000Z',
    tables: [{ table: 'apps', rows: 2, checksum: 'd41d8cd98f00b204e9800998ecf8427e' }],
    parts: parts.map((p) => ({ name: p.name, bytes: p.bytes.length, sha256: sha(p.bytes) })),
  };
}

/** A database part, then some of the DATA_DIR files, each a few bytes (none, at times). */
const partsArb: fc.Arbitrary<Part[]> = fc
  .tuple(
    fc.uint8Array({ maxLength: 48 }),
    fc.subarray(['runtime-keys.json', 'admin.key']),
    fc.array(fc.uint8Array({ maxLength: 48 }), { minLength: 2, maxLength: 2 }),
  )
  .map(([db, names, contents]) => [
    { name: 'database', bytes: Buffer.from(db) },
    ...names.map((name, i) => ({ name, bytes: Buffer.from(contents[i] ?? []) })),
  ]);

let count = 0;
async function open(bytes: Buffer, passphrase?: string): Promise<Outcome> {
  const file = path.join(scratch, `crafted-${(count += 1)}.kwbackup`);
  fs.writeFileSync(file, bytes);
  try {
    return await reader.open(file, scratch, passphrase);
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** The outcome, failing the run when the reader did not end within the bound. */
function ended(outcome: Outcome): { ok: true } | { ok: false; message: string } {
  if ('timedOut' in outcome) throw new Error(`the reader did not end within ${BOUND_MS} ms`);
  return outcome;
}

/** A refusal whose message matches `names`; a file that opens fails the run. */
function refusedNaming(outcome: Outcome, names: RegExp): void {
  const result = ended(outcome);
  if (result.ok) throw new Error('the crafted file opened');
  expect(result.message).toMatch(names);
}

/** A value written in place of a field, or the field left out (undefined). */
const anyValue = fc.oneof(fc.jsonValue(), fc.constant(undefined));

/** A byte count that is no whole number of bytes, or no number at all. */
const notWhole = fc.oneof(
  fc.double({ noInteger: true }),
  fc.integer({ min: -1_000_000, max: -1 }),
  fc.constantFrom(2 ** 53, 1e300, Number.MAX_SAFE_INTEGER, -0.5, 0.5),
  fc.string({ maxLength: 8 }),
  fc.constantFrom(null, true, [], {}),
);

type Mutation =
  | { field: 'bytes' | 'sha256' | 'name'; value: unknown }
  | { field: 'duplicate' }
  | { field: 'entry'; value: unknown };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ field: fc.constant('bytes' as const), value: fc.oneof(notWhole, fc.nat({ max: 300 })) }),
  fc.record({
    field: fc.constant('sha256' as const),
    value: fc.oneof(fc.stringMatching(/^[0-9a-f]{64}$/), fc.string({ maxLength: 70 }), anyValue),
  }),
  fc.record({
    field: fc.constant('name' as const),
    value: fc.oneof(
      fc.string({ maxLength: 20 }).filter((s) => !(NAMES as readonly string[]).includes(s)),
      fc.integer(),
      fc.constantFrom(null, undefined, ['database']),
    ),
  }),
  fc.constant({ field: 'duplicate' as const }),
  fc.record({ field: fc.constant('entry' as const), value: anyValue }),
);

/** The manifest with its part `i`'s entry changed; undefined when the change changes nothing. */
function lying(parts: readonly Part[], i: number, m: Mutation): Record<string, unknown> | undefined {
  const manifest = manifestOf(parts);
  const entries = manifest.parts as Array<Record<string, unknown>>;
  const entry = { ...entries[i] };
  if (m.field === 'entry') {
    entries[i] = m.value as Record<string, unknown>;
  } else if (m.field === 'duplicate') {
    const other = entries.find((_, j) => j !== i);
    if (other === undefined) return undefined;
    entries[i] = { ...entry, name: other.name };
  } else {
    if (JSON.stringify(entry[m.field]) === JSON.stringify(m.value)) return undefined;
    if (m.value === undefined) delete entry[m.field];
    else entry[m.field] = m.value;
    entries[i] = entry;
  }
  return manifest;
}

describe('the backup reader', () => {
  it('opens every well-formed backup it is given, parts and all', LONG, async () => {
    await fc.assert(
      fc.asyncProperty(partsArb, async (parts) => {
        expect(ended(await open(craft({ manifest: manifestOf(parts), parts })))).toEqual({ ok: true });
      }),
      { numRuns: 50 },
    );
  });

  it(
    'refuses a part entry that lies (its bytes, sha256 or name), naming that part, within the bound',
    LONG,
    async () => {
      await fc.assert(
        fc.asyncProperty(partsArb, fc.nat(), mutationArb, async (parts, at, mutation) => {
          const i = at % parts.length;
          const manifest = lying(parts, i, mutation);
          fc.pre(manifest !== undefined);
          refusedNaming(await open(craft({ manifest, parts })), new RegExp(`parts\\[${i}\\]`));
        }),
        { numRuns: 300, endOnFailure: true },
      );
    },
  );

  it(
    'refuses a non-integer bytes before a further part: the file that once made it spin forever',
    LONG,
    async () => {
      const parts = [
        { name: 'database', bytes: Buffer.from('a database of some bytes') },
        { name: 'runtime-keys.json', bytes: Buffer.from('{"keys":[]}') },
      ];
      const entries = manifestOf(parts).parts as Array<Record<string, unknown>>;
      for (const bytes of [(parts[0]?.bytes.length ?? 0) + 0.5, 0.5, 3.25, -1]) {
        const manifest = { ...manifestOf(parts), parts: [{ ...entries[0], bytes }, entries[1]] };
        refusedNaming(await open(craft({ manifest, parts })), /manifest\.parts\[0\]\.bytes/);
      }
    },
  );

  it(
    'refuses a manifest field of the wrong type, missing or out of bounds, naming it, within the bound',
    LONG,
    async () => {
      const fields = [
        'format',
        'keywardVersion',
        'database',
        'databaseFormat',
        'migrations',
        'createdAt',
        'tables',
        'parts',
      ] as const;
      await fc.assert(
        fc.asyncProperty(partsArb, fc.constantFrom(...fields), anyValue, async (parts, field, value) => {
          const manifest = manifestOf(parts);
          fc.pre(JSON.stringify(manifest[field]) !== JSON.stringify(value));
          if (value === undefined) delete manifest[field];
          else manifest[field] = value;
          const result = ended(await open(craft({ manifest, parts })));
          // A value that happens to be well-formed (another version, no migrations) opens.
          if (!result.ok) {
            expect(result.message).toMatch(
              field === 'format' ? /manifest\.format|manifest is format/ : new RegExp(`manifest\\.${field}`),
            );
          }
        }),
        { numRuns: 300, endOnFailure: true },
      );
    },
  );

  it('refuses a manifest line that is no manifest at all, naming the manifest', LONG, async () => {
    await fc.assert(
      fc.asyncProperty(
        partsArb,
        fc.oneof(
          fc.string({ maxLength: 200 }),
          fc.jsonValue().map((v) => JSON.stringify(v) ?? ''),
        ),
        async (parts, line) => {
          const rawManifest = line.replaceAll('\n', ' ');
          refusedNaming(await open(craft({ manifest: null, rawManifest, parts })), /manifest/);
        },
      ),
      { numRuns: 150, endOnFailure: true },
    );
  });

  it('refuses bytes after the last part, naming the part they follow', LONG, async () => {
    await fc.assert(
      fc.asyncProperty(partsArb, fc.uint8Array({ minLength: 1, maxLength: 64 }), async (parts, extra) => {
        const last = parts.length - 1;
        const file = craft({
          manifest: manifestOf(parts),
          parts: [...parts, { name: 'extra', bytes: Buffer.from(extra) }],
        });
        refusedNaming(await open(file), new RegExp(`after manifest\\.parts\\[${last}\\]`));
      }),
      { numRuns: 50, endOnFailure: true },
    );
  });

  it('refuses a file cut anywhere, or with anything after its trailer, within the bound', LONG, async () => {
    await fc.assert(
      fc.asyncProperty(
        partsArb,
        fc.nat(),
        fc.uint8Array({ minLength: 1, maxLength: 64 }),
        async (parts, at, tail) => {
          const whole = craft({ manifest: manifestOf(parts), parts });
          refusedNaming(await open(whole.subarray(0, at % whole.length)), /truncated|not a Keyward backup/);
          refusedNaming(await open(Buffer.concat([whole, tail])), /truncated|trailer/);
        },
      ),
      { numRuns: 150, endOnFailure: true },
    );
  });

  it('refuses a trailer whose fields lie or are malformed, naming the trailer', LONG, async () => {
    await fc.assert(
      fc.asyncProperty(
        partsArb,
        fc.constantFrom('bodyBytes', 'sha256', 'tag'),
        fc.oneof(anyValue, notWhole, fc.nat({ max: 1000 }), fc.stringMatching(/^[0-9a-f]{64}$/)),
        async (parts, field, value) => {
          const manifest = manifestOf(parts);
          const honest = craft({ manifest, parts });
          const file = craft({ manifest, parts, trailer: { [field]: value } });
          fc.pre(!file.equals(honest));
          refusedNaming(await open(file), /trailer/);
        },
      ),
      { numRuns: 200, endOnFailure: true },
    );
  });

  it(
    'refuses a header whose sealing is malformed, naming its field, before any key is derived',
    LONG,
    async () => {
      const sealing: Record<string, unknown> = {
        cipher: 'aes-256-gcm',
        kdf: 'scrypt',
        N: 2 ** 17,
        r: 8,
        p: 1,
        salt: randomBytes(16).toString('base64'),
        iv: randomBytes(12).toString('base64'),
        check: randomBytes(32).toString('base64'),
      };
      const notBase64Of = (bytes: number) =>
        fc.oneof(
          fc.constantFrom(
            randomBytes(bytes - 1).toString('base64'),
            randomBytes(bytes + 1).toString('base64'),
            '!!!!',
            '',
          ),
          notWhole,
          fc.constant(undefined),
        );
      // Only values that make the sealing malformed or too costly: each must be refused, by name.
      const malformed: Record<string, fc.Arbitrary<unknown>> = {
        cipher: anyValue.filter((v) => v !== 'aes-256-gcm'),
        kdf: anyValue.filter((v) => v !== 'scrypt'),
        N: fc.oneof(notWhole, fc.constantFrom(undefined, 0, 1, 3, 3 * 2 ** 15, 2 ** 18, 2 ** 21, 2 ** 40)),
        r: fc.oneof(notWhole, fc.constantFrom(undefined, 0, 9, 16, 65)),
        p: fc.oneof(notWhole, fc.constantFrom(undefined, 0, 2, 17, 1000)),
        salt: notBase64Of(16),
        iv: notBase64Of(12),
        check: notBase64Of(32),
        encryption: anyValue.filter((v) => v !== null),
      };
      const tag = randomBytes(16).toString('base64');
      await fc.assert(
        fc.asyncProperty(
          partsArb,
          fc
            .constantFrom(...Object.keys(malformed))
            .chain((field) => fc.tuple(fc.constant(field), malformed[field] ?? anyValue)),
          async (parts, [field, value]) => {
            const encryption: unknown = field === 'encryption' ? value : { ...sealing, [field]: value };
            if (field !== 'encryption' && value === undefined)
              delete (encryption as Record<string, unknown>)[field];
            const file = craft({
              header: { encryption },
              manifest: manifestOf(parts),
              parts,
              trailer: { tag },
            });
            refusedNaming(await open(file), /the header's encryption/);
          },
        ),
        { numRuns: 200, endOnFailure: true },
      );
    },
  );

  it('refuses a scrypt cost beyond what Keyward writes, before paying it', () => {
    const base = {
      cipher: 'aes-256-gcm',
      kdf: 'scrypt',
      salt: randomBytes(16).toString('base64'),
      iv: randomBytes(12).toString('base64'),
      check: randomBytes(32).toString('base64'),
    };
    expect(sealingAt({ ...base, N: 2 ** 17, r: 8, p: 1 }, 'encryption')).toMatchObject({ N: 2 ** 17 });
    for (const cost of [
      { N: 2 ** 17, r: 8, p: 16 },
      { N: 2 ** 20, r: 8, p: 1 },
      { N: 2 ** 18, r: 8, p: 1 },
      { N: 3 * 2 ** 15, r: 8, p: 1 },
      { N: 2 ** 17, r: 8.5, p: 1 },
    ]) {
      expect(() => sealingAt({ ...base, ...cost }, 'encryption'), JSON.stringify(cost)).toThrow(
        /^encryption(\.\w+)?: /,
      );
    }
  });
});
