/**
 * The Slurm scheduler (`slurm`): TorchX's sbatch script (pure translation), the slurmrestd submission derived
 * from it, the state table, the slurmrestd client and the scheduler itself.
 *
 * @module
 */
export * from './client.js';
export * from './describe.js';
export * from './log-files.js';
export * from './options.js';
export * from './scheduler.js';
export * from './state.js';
export * from './translate.js';
export * from './workspace.js';
