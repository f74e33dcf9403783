/**
 * The `local_cwd` scheduler: runs each replica as a process on this machine (TorchX's `local_cwd`).
 *
 * @module
 */
export * from './app-store.js';
export {
  EXIT_CODE_UNKNOWN_REASON,
  LiveApp,
  type LocalStateChange,
  NEVER_STARTED_REASON,
  SERVER_STOPPED_REASON,
} from './live-app.js';
export * from './local-cwd-scheduler.js';
export * from './log-files.js';
export * from './log-tail.js';
export * from './processes.js';
export * from './replica-process.js';
export * from './translate.js';
