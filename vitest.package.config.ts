import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/** `npm run test:package`: packs the package and installs it into a CDK app outside the repository (not part of `npm test`: it builds dist/). */
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/package/**/*.test.ts'],
    exclude: [],
    env: { ...base.test?.env, POWERTOOLS_METRICS_DISABLED: 'true' },
    testTimeout: 120_000,
    hookTimeout: 300_000,
  },
});
