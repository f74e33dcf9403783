import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The real-cluster suite (`npm run test:slurm`): each file starts its own Slurm cluster; files run one after
 * another (two clusters at once would compete for the CPUs their jobs ask for); slow real time.
 */
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/slurm/**/*.slurm.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
