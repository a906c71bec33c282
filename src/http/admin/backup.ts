import { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { adminMay } from '../access/access.js';
import { operatorOf } from '../guards/principal.js';

const Body = Type.Object({
  includeAdminKey: Type.Optional(Type.Boolean()),
  // Sent in the body (never logged), so it stays off the process list and out of URLs.
  passphrase: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  // false: an unencrypted file, asked for explicitly; without it a backup needs a passphrase.
  encrypt: Type.Optional(Type.Boolean()),
});

/** The answer's header naming the parts the file holds: the signing keys go only to `keys`. */
export const BACKUP_PARTS_HEADER = 'keyward-backup-parts';

/**
 * `keyward backup` on the embedded database, which only the server may open: the snapshot is
 * taken before the first byte is sent, then the file streams out. Its end (the trailer and its
 * checksum) is what tells the CLI the stream arrived whole.
 */
export function backupRoute(app: App): void {
  app.post(
    '/backup',
    {
      config: { access: adminMay('backup'), effect: 'whole-platform' },
      schema: { body: Type.Optional(Body) },
    },
    async (request, reply) => {
      const taken = await app.services.backup.take({
        includeAdminKey: request.body?.includeAdminKey === true,
        passphrase: request.body?.passphrase,
        encrypt: request.body?.encrypt !== false,
        roles: operatorOf(request).roles,
      });
      const parts = taken.manifest.parts.map((p) => p.name);
      request.log.info(
        { database: taken.manifest.database, tables: taken.manifest.tables.length, parts },
        'backup taken; streaming it',
      );
      return reply
        .header('content-type', 'application/octet-stream')
        .header('cache-control', 'no-store')
        .header(BACKUP_PARTS_HEADER, parts.join(', '))
        .send(Readable.from(taken.bytes));
    },
  );
}
