import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Servers bind ephemeral loopback ports, so files can run in parallel safely.
    pool: 'forks',
  },
});
