import { isEmbedded, type Db } from '../../db/client.js';
import { migrationStatus } from '../../db/migrate.js';
import { VERSION } from '../../version.js';
import { DashboardRepository, type DashboardCounts } from './dashboard.repository.js';

/** What `keyward status` shows of the server: only behind the admin key, since it names the version. */
export interface ServerStatus {
  version: string;
  database: 'embedded' | 'postgres';
  migrations: { applied: number; pending: string[] };
}

export class ServerStatusService {
  constructor(private readonly db: Db) {}

  async read(): Promise<ServerStatus> {
    const { applied, pending } = await migrationStatus(this.db);
    return {
      version: VERSION,
      database: isEmbedded(this.db) ? 'embedded' : 'postgres',
      migrations: { applied: applied.length, pending },
    };
  }

  /** The operator dashboard's counts, as of now. */
  async dashboard(now = new Date()): Promise<DashboardCounts> {
    return new DashboardRepository(this.db).counts(now);
  }
}
