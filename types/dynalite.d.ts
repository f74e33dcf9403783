/** Ambient types for dynalite 4 (it ships none): an in-process DynamoDB API server for tests and local mode. */
declare module 'dynalite' {
  import type { Server } from 'node:http';

  /** Options of {@link dynalite}. */
  export interface DynaliteOptions {
    /** Milliseconds a new table stays CREATING (default 500). */
    createTableMs?: number;
    /** Milliseconds a deleted table stays DELETING (default 500). */
    deleteTableMs?: number;
    /** Milliseconds an updated table stays UPDATING (default 500). */
    updateTableMs?: number;
    /** Largest item in KB (default 400). */
    maxItemSizeKb?: number;
    /** LevelDB directory; in memory when omitted. */
    path?: string;
    ssl?: boolean;
    verbose?: boolean;
    debug?: boolean;
  }

  /** Creates (but does not start) a DynamoDB-compatible HTTP server; call `listen` on it. */
  export default function dynalite(options?: DynaliteOptions): Server;
}
