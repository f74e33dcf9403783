import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The installed-package test builds and packs dist/: `npm run test:package` (vitest.package.config.ts).
    exclude: ['test/package/**', '**/node_modules/**'],
    environment: 'node',
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The SDK must never look at ~/.aws or the instance metadata service in tests.
    env: {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      POWERTOOLS_DEV: 'false',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    },
  },
});
