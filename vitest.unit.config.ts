import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run test:unit`: the fast loop while editing — test/unit without what builds or synthesizes
 * (the CDK stack's synth and cdk-nag tests, and the tests that bundle the CLI, the dashboard or the
 * functions). `npm test` runs all of them, these included.
 */
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/unit/**/*.test.ts'],
    exclude: [...(base.test?.exclude ?? []), 'test/unit/cdk/**', 'test/unit/**/bundle.test.ts'],
  },
});
