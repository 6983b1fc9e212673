// Builds the web panel (panel/, docs/panel.md) into dist/panel/: index.html, the service worker, and
// assets/ (content-hashed script and style, manifest, icons, version.json beside them). Everything the
// panel needs is in the package: no CDN, no web fonts. Run by `npm run build` after the agent bundle.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = path.join(ROOT, 'panel');
const OUT = path.join(ROOT, 'dist', 'panel');
const ASSETS = path.join(OUT, 'assets');
const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

fs.rmSync(OUT, { recursive: true, force: true });
fs.mkdirSync(ASSETS, { recursive: true });

const result = await build({
  entryPoints: { app: path.join(SRC, 'src', 'main.tsx') },
  outdir: ASSETS,
  entryNames: '[name]-[hash]',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome100', 'firefox100', 'safari15'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  sourcemap: 'linked',
  metafile: true,
  legalComments: 'linked',
  define: { 'process.env.NODE_ENV': '"production"' },
  logLevel: 'warning',
});
const outputs = Object.keys(result.metafile.outputs).map((f) => path.basename(f));
const js = outputs.find((f) => /^app-.*\.js$/.test(f));
const css = outputs.find((f) => /^app-.*\.css$/.test(f));
if (!js || !css) throw new Error(`panel bundle: missing outputs in ${outputs.join(', ')}`);

// Icons: the SVG as written, and PNG renderings of its simple shape for installers that want bitmaps.
fs.copyFileSync(path.join(SRC, 'static', 'icon.svg'), path.join(ASSETS, 'icon.svg'));
for (const size of [192, 512]) fs.writeFileSync(path.join(ASSETS, `icon-${size}.png`), iconPng(size));

const manifest = {
  name: 'svc control center',
  short_name: 'svc',
  description: 'Operations panel of an svc-control-center agent',
  id: '../../',
  start_url: '../../',
  scope: '../../',
  display: 'standalone',
  background_color: '#f4f6f8',
  theme_color: '#1f5fae',
  icons: [
    { src: 'icon.svg', sizes: 'any', type: 'image/svg+xml' },
    { src: 'icon-192.png', sizes: '192x192', type: 'image/png' },
    { src: 'icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'any maskable' },
  ],
};
fs.writeFileSync(path.join(ASSETS, 'manifest.webmanifest'), `${JSON.stringify(manifest, null, 2)}\n`);
fs.writeFileSync(path.join(OUT, 'version.json'), `${JSON.stringify({ version, js, css })}\n`);

const html = fs.readFileSync(path.join(SRC, 'static', 'index.html'), 'utf8').replace('{{JS}}', js).replace('{{CSS}}', css);
fs.writeFileSync(path.join(OUT, 'index.html'), html);

// The service worker, served at /control-center-sw.js so its scope covers / and /control-center.
const shell = ['./', ...[js, css, 'manifest.webmanifest', 'icon.svg', 'icon-192.png', 'icon-512.png'].map((f) => `control-center/assets/${f}`)];
await build({
  entryPoints: [path.join(SRC, 'src', 'sw.ts')],
  outfile: path.join(OUT, 'control-center-sw.js'),
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: ['chrome100', 'firefox100', 'safari15'],
  minify: true,
  define: { __SHELL__: JSON.stringify(shell), __VERSION__: JSON.stringify(`${version}-${js}`) },
  logLevel: 'warning',
});

/** A PNG of the icon: a blue rounded square with a white ring and hub (the SVG's shape, without the spokes). */
function iconPng(size) {
  const s = size / 512;
  const raw = Buffer.alloc((size * 4 + 1) * size);
  for (let y = 0; y < size; y++) {
    raw[y * (size * 4 + 1)] = 0;
    for (let x = 0; x < size; x++) {
      const px = (x + 0.5) / s;
      const py = (y + 0.5) / s;
      const r = 96;
      const cx = Math.min(Math.max(px, r), 512 - r);
      const cy = Math.min(Math.max(py, r), 512 - r);
      const inside = Math.hypot(px - cx, py - cy) <= r;
      const d = Math.hypot(px - 256, py - 256);
      const white = Math.abs(d - 150) <= 18 || d <= 52;
      const o = y * (size * 4 + 1) + 1 + x * 4;
      if (!inside) continue;
      const [R, G, B] = white ? [255, 255, 255] : [0x1f, 0x5f, 0xae];
      raw[o] = R;
      raw[o + 1] = G;
      raw[o + 2] = B;
      raw[o + 3] = 255;
    }
  }
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function crc32(buf) {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}
