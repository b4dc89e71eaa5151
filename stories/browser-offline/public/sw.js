// The story's service worker: it caches the page's shell (the page, its script and its style), so that a
// reload while offline, or with the page's server gone, still loads the page, which then resumes the
// unfinished run from IndexedDB. Plain JavaScript, copied as is by Vite (public/), served at the site's root
// so its scope is the whole page. For an app's own build, see docs/storage.md, "Offline reloads".
/* global self, caches, fetch, URL */
const CACHE = "loomwork-browser-offline-shell-v1";
// Every navigation of the page (whatever its query, ?pace=...) is answered with the one cached page.
const PAGE = new URL("./", self.registration.scope).href;

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      const page = await fetch(PAGE, { cache: "no-store" });
      if (!page.ok) throw new Error(`sw.js: the page answered ${page.status}`);
      const html = await page.clone().text();
      // The build's hashed files, as the page names them: <script src="/assets/index-*.js">, <link href="...css">.
      const assets = [...html.matchAll(/(?:src|href)="([^"]+\.(?:js|css))"/g)].map(
        (match) => new URL(match[1], PAGE).href,
      );
      await cache.put(PAGE, page);
      await cache.addAll(assets);
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const key of await caches.keys()) if (key !== CACHE) await caches.delete(key);
      await self.clients.claim();
    })(),
  );
});

// Network first, so that a reload online gets the newest build; the cache when the network or the server is gone.
self.addEventListener("fetch", (event) => {
  const { request } = event;
  if (request.method !== "GET" || new URL(request.url).origin !== self.location.origin) return;
  const key = request.mode === "navigate" ? PAGE : request;
  event.respondWith(
    (async () => {
      const cache = await caches.open(CACHE);
      try {
        const response = await fetch(request);
        if (response.ok) await cache.put(key, response.clone());
        return response;
      } catch (error) {
        const cached = await cache.match(key);
        if (cached) return cached;
        throw error;
      }
    })(),
  );
});
