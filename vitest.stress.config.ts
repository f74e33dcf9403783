import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/** `npm run test:stress`: the long reliability runs (not part of `npm test`). */
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/stress/**/*.stress.ts'],
    testTimeout: 600_000,
    hookTimeout: 120_000,
  },
});
