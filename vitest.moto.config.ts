import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run test:moto`: the end-to-end suite over the real AWS wire against moto (an AWS emulator the global
 * setup starts with `python3 -m moto.server`). Not part of `npm test`, which needs no Python.
 */
export default defineConfig({
  test: {
    ...base.test,
    env: { ...base.test?.env, POWERTOOLS_METRICS_DISABLED: 'true' },
    include: ['test/moto/**/*.moto.ts'],
    globalSetup: ['test/moto/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 90_000,
  },
});
