import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { newSealing, openSealing, sealer, sealingAt, unsealer, type Sealing } from './encryption.js';
import { base64At, BackupFileError, jsonAt, objectAt, SHA256_HEX, textAt, wholeAt } from './fields.js';
import { ManifestError, parseManifest, type Manifest, type PartEntry } from './manifest.js';

/**
 * A backup file:
 *
 *     KEYWARD-BACKUP 1\n
 *     {"encryption": null | Sealing}\n
 *     body: the manifest as one JSON line, then each part's bytes (encrypted whole when sealed)
 *     \nKEYWARD-END {"bodyBytes", "sha256", "tag"}\n
 *
 * The trailer's sha256 covers every byte before it: a truncated file has no trailer, an altered
 * one a different digest. The manifest names each part's length and sha256.
 */
const MAGIC = 'KEYWARD-BACKUP 1\n';
const TRAILER = '\nKEYWARD-END ';
/** The header and the trailer are a few hundred bytes; more is not a Keyward backup. */
const HEAD_LIMIT = 64 * 1024;
/** A manifest lists some dozens of tables and some hundreds of migrations: well under this. */
const MANIFEST_LIMIT = 1024 * 1024;

/** A part as the writer reads it: bytes in memory, or a file (pg_dump's output). */
export interface PartSource {
  name: string;
  bytes: Buffer | { file: string };
}

interface Header {
  encryption: Sealing | null;
}

interface Trailer {
  bodyBytes: number;
  sha256: string;
  tag?: string;
}

async function* partBytes(source: PartSource): AsyncGenerator<Buffer> {
  if (Buffer.isBuffer(source.bytes)) {
    yield source.bytes;
    return;
  }
  for await (const chunk of fs.createReadStream(source.bytes.file)) yield chunk as Buffer;
}

/** The entries the manifest lists for `sources`: their lengths and digests. */
export async function partEntries(sources: readonly PartSource[]): Promise<PartEntry[]> {
  const entries: PartEntry[] = [];
  for (const source of sources) {
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of partBytes(source)) {
      hash.update(chunk);
      bytes += chunk.length;
    }
    entries.push({ name: source.name, bytes, sha256: hash.digest('hex') });
  }
  return entries;
}

/**
 * The backup file's bytes, in order, for a manifest whose `parts` were made by `partEntries`
 * from the same sources; sealed with `passphrase` when one is given.
 */
export async function* backupBytes(
  manifest: Manifest,
  sources: readonly PartSource[],
  passphrase: string | undefined,
): AsyncGenerator<Buffer> {
  const sealed = passphrase === undefined ? undefined : await newSealing(passphrase);
  const head = Buffer.from(
    MAGIC + JSON.stringify({ encryption: sealed?.sealing ?? null } satisfies Header) + '\n',
  );
  const cipher = sealed === undefined ? undefined : sealer(sealed.key, sealed.sealing, head);
  const digest = createHash('sha256').update(head);
  let bodyBytes = 0;
  const counted = (bytes: Buffer): Buffer => {
    digest.update(bytes);
    bodyBytes += bytes.length;
    return bytes;
  };
  const out = (plain: Buffer): Buffer => counted(cipher === undefined ? plain : cipher.update(plain));
  yield head;
  yield out(Buffer.from(JSON.stringify(manifest) + '\n'));
  for (const source of sources) {
    for await (const chunk of partBytes(source)) yield out(chunk);
  }
  if (cipher !== undefined) yield counted(cipher.final());
  const trailer: Trailer = {
    bodyBytes,
    sha256: digest.digest('hex'),
    ...(cipher === undefined ? {} : { tag: cipher.getAuthTag().toString('base64') }),
  };
  yield Buffer.from(TRAILER + JSON.stringify(trailer) + '\n');
}

function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  const read = fs.readSync(fd, buffer, 0, length, position);
  return buffer.subarray(0, read);
}

/** What the readers refuse (a field or a part, named by its path), said of `file`. */
function saidOf(file: string, error: unknown): unknown {
  return error instanceof BackupFileError
    ? new BackupFileError(`${file} is damaged or altered: ${error.message}`)
    : error;
}

function ofFile<T>(file: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw saidOf(file, error);
  }
}

function headerAt(text: string): Header {
  const h = objectAt(jsonAt(text, 'the header'), 'the header');
  return { encryption: h.encryption === null ? null : sealingAt(h.encryption, "the header's encryption") };
}

function trailerAt(text: string, size: number): Trailer {
  const t = objectAt(jsonAt(text, 'the trailer'), 'the trailer');
  return {
    bodyBytes: wholeAt(t.bodyBytes, "the trailer's bodyBytes", size),
    sha256: textAt(t.sha256, "the trailer's sha256", 64, SHA256_HEX),
    ...(t.tag === undefined ? {} : { tag: base64At(t.tag, "the trailer's tag", 16) }),
  };
}

/** Where the header, body and trailer lie in the file, or why it is no whole backup. */
function layoutOf(file: string): { head: Buffer; header: Header; bodyStart: number; trailer: Trailer } {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const start = readAt(fd, 0, Math.min(size, HEAD_LIMIT));
    if (!start.subarray(0, MAGIC.length).equals(Buffer.from(MAGIC))) {
      throw new BackupFileError(`${file} is not a Keyward backup`);
    }
    const headerEnd = start.indexOf('\n', MAGIC.length);
    if (headerEnd < 0) throw new BackupFileError(`${file} is truncated: its header is incomplete`);
    const header = ofFile(file, () => headerAt(start.subarray(MAGIC.length, headerEnd).toString()));
    const tailStart = Math.max(0, size - HEAD_LIMIT);
    const tail = readAt(fd, tailStart, size - tailStart);
    const at = tail.lastIndexOf(TRAILER);
    const ends = tail.length > 0 && tail[tail.length - 1] === 0x0a;
    if (at < 0 || !ends) {
      throw new BackupFileError(`${file} is truncated: the end of the backup is missing`);
    }
    const trailerText = tail.subarray(at + TRAILER.length, tail.length - 1).toString();
    // The trailer is one line: JSON.parse would let a blank line after it through as whitespace.
    if (trailerText.includes('\n')) throw new BackupFileError(`${file} has bytes after its trailer`);
    const trailer = ofFile(file, () => trailerAt(trailerText, size));
    const bodyStart = headerEnd + 1;
    if (tailStart + at !== bodyStart + trailer.bodyBytes) {
      throw new BackupFileError(
        `${file} is truncated or altered: its body is not the length the trailer's bodyBytes records`,
      );
    }
    if ((header.encryption === null) !== (trailer.tag === undefined)) {
      throw new BackupFileError(
        header.encryption === null
          ? `${file} is altered: the trailer's tag is the seal of an encrypted backup, and its header says it is not`
          : `${file} is damaged: its seal is missing (the trailer's tag)`,
      );
    }
    return { head: start.subarray(0, bodyStart), header, bodyStart, trailer };
  } finally {
    fs.closeSync(fd);
  }
}

async function digestOf(file: string, end: number): Promise<string> {
  const hash = createHash('sha256');
  if (end > 0)
    for await (const chunk of fs.createReadStream(file, { start: 0, end: end - 1 }))
      hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** A backup read whole and checked: its manifest, and each part as a file in a scratch folder. */
export interface OpenedBackup {
  manifest: Manifest;
  encrypted: boolean;
  /** Each part's name and the scratch file holding its bytes. */
  parts: Map<string, string>;
  /** Removes the scratch folder. */
  dispose(): void;
}

/** Whether the backup is encrypted, from its header alone. */
export function isEncrypted(file: string): boolean {
  return layoutOf(file).header.encryption !== null;
}

/**
 * Checks `file` whole (trailer, digest, passphrase, every part's length and digest) and unpacks
 * its parts into a new folder under `scratchRoot`. Nothing is restored from a backup this refuses.
 */
export async function openBackup(
  file: string,
  passphrase: string | undefined,
  scratchRoot: string,
): Promise<OpenedBackup> {
  const { head, header, bodyStart, trailer } = layoutOf(file);
  if ((await digestOf(file, bodyStart + trailer.bodyBytes)) !== trailer.sha256) {
    throw new BackupFileError(
      `${file} is altered or damaged: its checksum does not match the trailer's sha256`,
    );
  }
  let decipher;
  if (header.encryption !== null) {
    if (passphrase === undefined) {
      throw new BackupFileError(
        `${file} is encrypted: give its passphrase (BACKUP_PASSPHRASE or --passphrase-file)`,
      );
    }
    if (trailer.tag === undefined) throw new BackupFileError(`${file} is damaged: its seal is missing`);
    const key = await openSealing(header.encryption, passphrase);
    decipher = unsealer(key, header.encryption, head, Buffer.from(trailer.tag, 'base64'));
  }
  const dir = fs.mkdtempSync(path.join(scratchRoot, 'keyward-restore-'));
  const dispose = () => fs.rmSync(dir, { recursive: true, force: true });
  try {
    const unpacked = await unpack(file, bodyStart, trailer.bodyBytes, decipher, dir);
    return { ...unpacked, encrypted: header.encryption !== null, dispose };
  } catch (error) {
    dispose();
    throw error;
  }
}

async function unpack(
  file: string,
  bodyStart: number,
  bodyBytes: number,
  decipher: NodeJS.ReadWriteStream | undefined,
  dir: string,
): Promise<{ manifest: Manifest; parts: Map<string, string> }> {
  if (bodyBytes === 0) throw new BackupFileError(`${file} is damaged or altered: it has no manifest`);
  const body = fs.createReadStream(file, { start: bodyStart, end: bodyStart + bodyBytes - 1 });
  // AES-GCM is a stream cipher: the plain body is as long as the sealed one.
  const reader = new PartReader(dir, bodyBytes);
  const consume = async (source: AsyncIterable<Buffer | string>) => {
    for await (const chunk of source) reader.take(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  };
  try {
    if (decipher === undefined) await pipeline(body, consume);
    else await pipeline(body, decipher, consume);
    return reader.finish();
  } catch (error) {
    if (error instanceof BackupFileError || error instanceof ManifestError) throw saidOf(file, error);
    throw new BackupFileError(
      `${file} is altered or damaged: it does not decrypt (${(error as Error).message})`,
    );
  }
}

/**
 * Splits the plain body into the manifest and its parts, each checked against its manifest entry
 * as it ends. Every length it goes by is a whole number the manifest's parser checked, so each
 * turn of its loop takes at least one byte, and a part that lies is named by its own checksum.
 */
class PartReader {
  /** The manifest line's chunks until its end of line comes. */
  private line: Buffer[] = [];
  private lineBytes = 0;
  private manifest: Manifest | undefined;
  private index = 0;
  private written = 0;
  /** Body bytes read so far. */
  private consumed = 0;
  private hash = createHash('sha256');
  private fd: number | undefined;
  readonly parts = new Map<string, string>();

  constructor(
    private readonly dir: string,
    private readonly bodyBytes: number,
  ) {}

  take(chunk: Buffer): void {
    if (this.manifest !== undefined) {
      this.write(chunk);
      return;
    }
    const end = chunk.indexOf(0x0a);
    if (this.lineBytes + (end < 0 ? chunk.length : end) > MANIFEST_LIMIT) {
      throw new BackupFileError(`manifest: longer than ${MANIFEST_LIMIT} bytes, which no Keyward writes`);
    }
    if (end < 0) {
      this.line.push(chunk);
      this.lineBytes += chunk.length;
      return;
    }
    this.line.push(chunk.subarray(0, end));
    this.consumed = this.lineBytes + end + 1;
    this.manifest = parseManifest(Buffer.concat(this.line).toString(), this.bodyBytes);
    this.line = [];
    this.openNext();
    this.write(chunk.subarray(end + 1));
  }

  private label(i: number): string {
    return `manifest.parts[${i}] (${this.manifest?.parts[i]?.name ?? ''})`;
  }

  private current(): PartEntry | undefined {
    return this.manifest?.parts[this.index];
  }

  /** Opens the next part with bytes to come; parts of none are closed (and checked) on the way. */
  private openNext(): void {
    for (let part = this.current(); part !== undefined; part = this.current()) {
      const file = path.join(this.dir, `part-${this.index}`);
      this.fd = fs.openSync(file, 'wx', 0o600);
      this.parts.set(part.name, file);
      this.written = 0;
      this.hash = createHash('sha256');
      if (part.bytes > 0) return;
      this.closeCurrent();
    }
  }

  private closeCurrent(): void {
    const part = this.current();
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
    if (part !== undefined && this.hash.digest('hex') !== part.sha256) {
      throw new BackupFileError(
        `${this.label(this.index)}: its ${part.bytes} bytes do not match its sha256: the part is altered`,
      );
    }
    this.index += 1;
  }

  private write(chunk: Buffer): void {
    let rest = chunk;
    while (rest.length > 0) {
      const part = this.current();
      if (part === undefined || this.fd === undefined) {
        const after =
          this.index === 0
            ? 'the manifest (manifest.parts lists none)'
            : `${this.label(this.index - 1)}, its last part`;
        throw new BackupFileError(
          `after ${after}, the body holds ${this.bodyBytes - this.consumed} bytes the manifest does not list: it is altered`,
        );
      }
      // part.bytes > this.written, both whole numbers: at least one byte is taken.
      const take = rest.subarray(0, part.bytes - this.written);
      fs.writeSync(this.fd, take);
      this.hash.update(take);
      this.written += take.length;
      this.consumed += take.length;
      rest = rest.subarray(take.length);
      if (this.written === part.bytes) {
        this.closeCurrent();
        this.openNext();
      }
    }
  }

  finish(): { manifest: Manifest; parts: Map<string, string> } {
    if (this.manifest === undefined) {
      throw new BackupFileError('manifest: the body ends before its end of line: the backup has no manifest');
    }
    const part = this.current();
    if (part !== undefined) {
      throw new BackupFileError(
        `${this.label(this.index)}: the body ends ${this.written} bytes into its ${part.bytes}: the backup is truncated or altered`,
      );
    }
    return { manifest: this.manifest, parts: this.parts };
  }
}

/** Whether `file` is a whole backup as written (trailer and digest), without opening its body. */
export async function checkWhole(file: string): Promise<void> {
  const { bodyStart, trailer } = layoutOf(file);
  if ((await digestOf(file, bodyStart + trailer.bodyBytes)) !== trailer.sha256) {
    throw new BackupFileError(
      `${file} is altered or damaged: its checksum does not match the trailer's sha256`,
    );
  }
}
