import { defineConfig } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// Two windows, two entry pages: the main window and the approval prompt.
export default defineConfig(({ mode }) => ({
  plugins: [svelte()],
  // Tauri loads the built files from its own protocol: keep URLs relative.
  base: './',
  clearScreen: false,
  server: {
    port: 1420,
    strictPort: true,
    // The policy JSON Schema and example policies are imported from ../policies.
    fs: { allow: ['.', '../policies'] },
  },
  build: {
    target: 'es2022',
    rollupOptions: {
      input: { main: 'index.html', prompt: 'prompt.html' },
    },
  },
  // Svelte 5 under Vitest: take the browser build of svelte, not the server one.
  resolve: mode === 'test' ? { conditions: ['browser'] } : undefined,
  test: {
    environment: 'node',
    include: ['src/**/*.test.ts'],
    // CI machines have 2 cores shared with Rust builds; a slow jsdom start is not a failure.
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
}));
