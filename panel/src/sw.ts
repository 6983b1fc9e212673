// The service worker of the panel (docs/panel.md § Offline): caches the shell (page, script, style,
// manifest, icons) so the panel opens without the network; /v1 calls and the stream always go to the
// agent. The build replaces __SHELL__ and __VERSION__.
const sw = self as unknown as ServiceWorkerGlobalScope;
declare const __SHELL__: string[];
declare const __VERSION__: string;

const CACHE = `svc-panel-${__VERSION__}`;
const scopeUrl = new URL(sw.registration.scope);
const shell = __SHELL__.map((p) => new URL(p, scopeUrl).href);
const pages = new Set([new URL('./', scopeUrl).href, new URL('control-center', scopeUrl).href]);

sw.addEventListener('install', (event: ExtendableEvent) => {
  event.waitUntil(caches.open(CACHE).then((c) => c.addAll(shell)).then(() => sw.skipWaiting()));
});

sw.addEventListener('activate', (event: ExtendableEvent) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith('svc-panel-') && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => sw.clients.claim()),
  );
});

sw.addEventListener('fetch', (event: FetchEvent) => {
  const req = event.request;
  if (req.method !== 'GET') return;
  const url = new URL(req.url);
  const href = url.origin + url.pathname;
  if (pages.has(href)) {
    // The page: network first (a new build shows at once), the cached shell when offline.
    event.respondWith(
      fetch(req)
        .then((res) => {
          const copy = res.clone();
          if (res.ok) void caches.open(CACHE).then((c) => c.put(new URL('./', scopeUrl).href, copy));
          return res;
        })
        .catch(async () => (await caches.match(new URL('./', scopeUrl).href)) ?? Response.error()),
    );
    return;
  }
  if (shell.includes(href)) {
    event.respondWith(caches.match(href).then((hit) => hit ?? fetch(req)));
  }
  // Everything else (the /v1 API, the stream) is not touched.
});
