import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/** The real-cluster suite (`npm run test:slurm`): one file, its own Slurm cluster, slow real time. */
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/slurm/**/*.slurm.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
