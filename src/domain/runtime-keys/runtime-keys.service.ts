import { importJWK, SignJWT, type CryptoKey } from 'jose';
import type { Db } from '../../db/client.js';
import { NO_REQUEST, operatorActor, type OperatorRequest } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import { LEASE_TYP, type LeaseSigner, type OfflineLeaseClaims } from '../runtime/lease-claims.js';
import { GRANT_TYP, type PoolGrantClaims } from '../relay/pool-grant.js';
import {
  generateEd25519,
  LEASE_ALGORITHM,
  publicHalf,
  thumbprintOf,
  type Ed25519PrivateJwk,
  type Ed25519PublicJwk,
} from './ed25519.js';
import {
  createKeyFile,
  keyFileVersion,
  readKeyFile,
  replaceKeyFile,
  RuntimeKeyFileError,
  runtimeKeysFile,
  type FileVersion,
  type StoredRuntimeKey,
} from './key-file.js';
import { RuntimeKeysRepository } from './runtime-keys.repository.js';

/** Rotation asked of a key that RUNTIME_SIGNING_KEY sets: the operator rotates the variable. */
export class RuntimeKeyManagedError extends Error {}

/**
 * Where the signing key comes from: the variable, the key file in DATA_DIR, or, on a relay, the
 * relay's own key certified by its pool grant (docs/relay.md).
 */
export type RuntimeKeySource = 'variable' | 'file' | 'relay';

/** A published key as `/.well-known/jwks.json` shows it. */
export interface PublishedJwk extends Ed25519PublicJwk {
  kid: string;
  alg: typeof LEASE_ALGORITHM;
  use: 'sig';
}

export interface Jwks {
  keys: PublishedJwk[];
}

/** What an operator sees of a key; `current` is the one this instance signs with. */
export interface RuntimeKeyView {
  kid: string;
  createdAt: number;
  retiredAt: number | null;
  current: boolean;
}

export interface RuntimeKeyList {
  source: RuntimeKeySource;
  keys: RuntimeKeyView[];
}

export interface RotatedKey {
  kid: string;
  previousKid: string;
}

/**
 * What the surfaces ask of the runtime's keys: the server's own (RuntimeKeysService) or a relay's
 * (RelayKeys), so the runtime, activation and the JWKS route run the same code on both.
 */
export interface RuntimeKeys extends LeaseSigner {
  readonly source: RuntimeKeySource;
  prepare(): Promise<string>;
  signGrant(claims: PoolGrantClaims): Promise<{ token: string; kid: string }>;
  jwks(): Promise<Jwks>;
  list(): Promise<RuntimeKeyList>;
  rotate(request?: OperatorRequest): Promise<RotatedKey>;
}

/** The key that signs now, ready to use, and the file version it was read from. */
interface SigningKey {
  kid: string;
  key: CryptoKey;
  version: FileVersion | undefined;
}

async function newStoredKey(after: StoredRuntimeKey | undefined): Promise<StoredRuntimeKey> {
  const privateJwk = await generateEd25519();
  // The newest key signs: a clock set back must not leave the new key older than the last one.
  const createdAt = Math.max(Date.now(), after === undefined ? 0 : Date.parse(after.createdAt) + 1);
  return { kid: await thumbprintOf(privateJwk), privateJwk, createdAt: new Date(createdAt).toISOString() };
}

async function importSigningKey(jwk: Ed25519PrivateJwk): Promise<CryptoKey> {
  const key = await importJWK({ ...jwk, alg: LEASE_ALGORITHM }, LEASE_ALGORITHM);
  if (key instanceof Uint8Array) throw new Error('an Ed25519 JWK imported as a secret');
  return key;
}

/**
 * The license runtime's signing keys: signs offline leases (compact JWS, EdDSA) and publishes the
 * public half of every key that ever signed. With RUNTIME_SIGNING_KEY that variable is the one key;
 * otherwise DATA_DIR/runtime-keys.json holds them, generated at the first start, and the newest
 * signs. A key is recorded in the database before its first signature, so every instance sharing
 * the database publishes it, and keeps publishing it after a rotation.
 */
export class RuntimeKeysService implements RuntimeKeys {
  private readonly keys: RuntimeKeysRepository;
  private readonly file: string;
  private signing: SigningKey | undefined;
  private loading: Promise<SigningKey> | undefined;
  /** Rotations in this process, one after another. */
  private rotations: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly settings: { variable: Ed25519PrivateJwk | undefined; dataDir: string },
  ) {
    this.keys = new RuntimeKeysRepository(db);
    this.file = runtimeKeysFile(settings.dataDir);
  }

  get source(): RuntimeKeySource {
    return this.settings.variable === undefined ? 'file' : 'variable';
  }

  /** At start: the key file made if there is none, and its keys recorded. Returns the signing kid. */
  async prepare(): Promise<string> {
    return (await this.current()).kid;
  }

  async sign(claims: OfflineLeaseClaims): Promise<{ token: string; kid: string }> {
    const { kid, key } = await this.current();
    const token = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: LEASE_ALGORITHM, kid, typ: LEASE_TYP })
      .sign(key);
    return { token, kid };
  }

  /** A relay's pool grant, signed as a lease is but typed as a grant (docs/relay.md). */
  async signGrant(claims: PoolGrantClaims): Promise<{ token: string; kid: string }> {
    const { kid, key } = await this.current();
    const token = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: LEASE_ALGORITHM, kid, typ: GRANT_TYP })
      .sign(key);
    return { token, kid };
  }

  /**
   * Signs raw bytes with the current key (Ed25519): the typed form of an activation's answer,
   * which names the key in its own layout rather than in a JWS header, so `build` makes the bytes
   * knowing the kid of the key that will sign them.
   */
  async signBytes(
    build: (kid: string) => Promise<Uint8Array>,
  ): Promise<{ data: Uint8Array; signature: Uint8Array; kid: string }> {
    const { kid, key } = await this.current();
    const data = await build(kid);
    const signature = await crypto.subtle.sign('Ed25519', key, data as Uint8Array<ArrayBuffer>);
    return { data, signature: new Uint8Array(signature), kid };
  }

  /** Every key ever registered, retired ones too: leases they signed may still be running. */
  async jwks(): Promise<Jwks> {
    const published = await this.keys.list();
    return {
      keys: published.map((k) => ({
        ...publicHalf(k.publicJwk),
        kid: k.kid,
        alg: LEASE_ALGORITHM,
        use: 'sig',
      })),
    };
  }

  async list(): Promise<RuntimeKeyList> {
    const { kid } = await this.current();
    const published = await this.keys.list();
    return {
      source: this.source,
      keys: published.map((k) => ({
        kid: k.kid,
        createdAt: k.createdAt.getTime(),
        retiredAt: k.retiredAt === null ? null : k.retiredAt.getTime(),
        current: k.kid === kid,
      })),
    };
  }

  /**
   * A new key signs from now on; the one before is retired but stays published. The file is
   * written first: a failure after it leaves a key that the next load records anyway.
   */
  async rotate(request: OperatorRequest = NO_REQUEST): Promise<RotatedKey> {
    if (this.settings.variable !== undefined) {
      throw new RuntimeKeyManagedError(
        'the runtime signing key is set by RUNTIME_SIGNING_KEY: rotate it by setting a new key there and ' +
          'restarting; the old public key stays published',
      );
    }
    const rotation = this.rotations.then(() => this.rotateFile(request));
    this.rotations = rotation.catch(() => undefined);
    return rotation;
  }

  private async rotateFile(request: OperatorRequest): Promise<RotatedKey> {
    await this.current();
    const stored = (await readKeyFile(this.file)) ?? [];
    const previous = stored[stored.length - 1];
    if (previous === undefined) throw new RuntimeKeyFileError(`${this.file} holds no key`);
    const fresh = await newStoredKey(previous);
    await replaceKeyFile(this.file, [...stored, fresh]);
    await this.db.transaction().execute(async (trx) => {
      const keys = new RuntimeKeysRepository(trx);
      await keys.register([
        { kid: fresh.kid, publicJwk: publicHalf(fresh.privateJwk), createdAt: new Date(fresh.createdAt) },
      ]);
      await keys.retire(previous.kid);
      await new AuditRepository(trx).record(operatorActor(request), [
        {
          action: 'runtime_key.rotated',
          subject: fresh.kid,
          enterprise: null,
          detail: { previousKid: previous.kid },
        },
      ]);
    });
    this.signing = undefined;
    await this.current();
    return { kid: fresh.kid, previousKid: previous.kid };
  }

  /**
   * The signing key, read again when the file changed (a rotation by another instance sharing
   * DATA_DIR): a stat per signature, a read only after a change.
   */
  private async current(): Promise<SigningKey> {
    const signing = this.signing;
    if (signing !== undefined) {
      if (this.settings.variable !== undefined) return signing;
      if ((await keyFileVersion(this.file)) === signing.version) return signing;
    }
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async load(): Promise<SigningKey> {
    const variable = this.settings.variable;
    const loaded =
      variable === undefined
        ? await this.loadFile()
        : { version: undefined, keys: [{ kid: await thumbprintOf(variable), privateJwk: variable }] };
    await this.keys.register(
      loaded.keys.map((k) => ({
        kid: k.kid,
        publicJwk: publicHalf(k.privateJwk),
        ...('createdAt' in k ? { createdAt: new Date(k.createdAt) } : {}),
      })),
    );
    const newest = loaded.keys[loaded.keys.length - 1];
    if (newest === undefined) throw new RuntimeKeyFileError(`${this.file} holds no key`);
    this.signing = {
      kid: newest.kid,
      key: await importSigningKey(newest.privateJwk),
      version: loaded.version,
    };
    return this.signing;
  }

  /** The file's keys, oldest first, made with one new key when there is no file or it is empty. */
  private async loadFile(): Promise<{ version: FileVersion | undefined; keys: StoredRuntimeKey[] }> {
    // The version is taken before the read: a change in between is seen at the next signature.
    let version = await keyFileVersion(this.file);
    let keys = await readKeyFile(this.file);
    if (keys === undefined || keys.length === 0) {
      const fresh = await newStoredKey(undefined);
      if (keys !== undefined) await replaceKeyFile(this.file, [fresh]);
      else if (!(await createKeyFile(this.file, [fresh]))) {
        // Another instance sharing DATA_DIR made it first: its key is the one.
        return this.loadFile();
      }
      version = await keyFileVersion(this.file);
      keys = [fresh];
    }
    for (const key of keys) {
      if ((await thumbprintOf(key.privateJwk)) !== key.kid) {
        throw new RuntimeKeyFileError(`${this.file} holds a key whose kid is not its thumbprint`);
      }
    }
    return { version, keys };
  }
}
