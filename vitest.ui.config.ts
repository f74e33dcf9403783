import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// `npm run test:ui`: the dashboard in Debian's Chromium (/usr/bin/chromium) driven by playwright-core.
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/ui/**/*.ui.ts'],
    exclude: ['**/node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
