import { isEmbedded, type Db } from '../../db/client.js';
import { migrationStatus } from '../../db/migrate.js';
import { VERSION } from '../../version.js';
import { OperatorsRepository } from '../operators/operators.repository.js';
import { DashboardRepository, type DashboardCounts } from './dashboard.repository.js';

/** What `keyward status` shows of the server: only behind the admin key, since it names the version. */
export interface ServerStatus {
  version: string;
  database: 'embedded' | 'postgres';
  migrations: { applied: number; pending: string[] };
  /** How operators get in: active owners, and whether the admin key still opens the admin API. */
  signIn: { owners: number; adminKeyEnabled: boolean };
}

export class ServerStatusService {
  constructor(
    private readonly db: Db,
    private readonly adminKeyEnabled = true,
  ) {}

  async read(): Promise<ServerStatus> {
    const { applied, pending } = await migrationStatus(this.db);
    return {
      version: VERSION,
      database: isEmbedded(this.db) ? 'embedded' : 'postgres',
      migrations: { applied: applied.length, pending },
      signIn: {
        owners: await new OperatorsRepository(this.db).activeOwners(),
        adminKeyEnabled: this.adminKeyEnabled,
      },
    };
  }

  /** The operator dashboard's counts, as of now. */
  async dashboard(now = new Date()): Promise<DashboardCounts> {
    return new DashboardRepository(this.db).counts(now);
  }
}
