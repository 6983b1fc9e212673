// Bundles the compiled agent (dist/agent, emitted by tsc) into dist/bundle/: one entry module plus
// lazily loaded chunks. Loading one file instead of ~260 cuts the agent's cold start roughly in half
// on an ARM gateway's slow storage, and the chunks keep rarely used code (OIDC, JWT) off the start path.
// Native addons stay external: they must be loaded from node_modules at run time.
import { build } from 'esbuild';

await build({
  entryPoints: { svc: 'dist/agent/cli/main.js' },
  outdir: 'dist/bundle',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outExtension: { '.js': '.mjs' },
  // pdfkit loads its standard fonts through its package.json "imports" map at run time, which only
  // resolves from its own package directory (agent/reports/report-pdf.ts).
  external: ['serialport', '@serialport/*', 'socketcan', 'bufferutil', 'utf-8-validate', 'pdfkit'],
  // CommonJS dependencies call require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);" },
  sourcemap: 'linked',
  // No comments or indentation: a smaller source for V8 to scan and keep, and no UTF-8 from comments
  // (one non-Latin-1 character makes V8 hold a whole chunk's source as a two-byte string). Names stay
  // readable; the linked source map points back to dist/agent.
  minifyWhitespace: true,
  logLevel: 'warning',
});
