# scripts/web.mk — the demo page (web/), its browser tests and its benchmark. Included by the
# Makefile after scripts/wasm.mk, whose `wasm` and `node_modules/.stamp` targets it uses.
#
#   make demo        builds everything (native tools, both wasm builds, the page's bundles), then
#                    serves the repository on localhost with COOP/COEP headers and prints the URL;
#                    the page opens on the shipped Model A (DEMO_PORT=8000; DEMO_FLAGS=--no-isolation
#                    serves it without the headers). While it serves, an edit of any module the
#                    page runs rebuilds its bundle: reload to see it
#   make web-bundle  the page's bundles, web/bundle/ (scripts/bundle-web.mjs): its modules as one
#                    file and the model worker with the library as another; rebuilt by every
#                    target here when a module they hold changes
#   make test-web    node --test tests/web/ (TEST_JOBS files at once) — Playwright (playwright-core) driving Debian's
#                    chromium, headless; installs chromium when it is missing (the one rule for
#                    the browser, which test-js and bench-wasm use too)
#   make bench-web   time from navigation to the first token (cold and warm, isolated and
#                    not; best / median of 5) and where it goes, phase by phase; render time per
#                    token at a 256-token context (scripts/bench-web.mjs; BENCH_WEB_FLAGS, e.g.
#                    "--first-token --runs 9 --against ../other-checkout" for before/after runs)
#   make trace-web   where the CPU goes until the first token: cold loads (or --warm reloads)
#                    traced by Chromium, each thread's busy time, wasm and JS compiles, style,
#                    paint, the longest tasks (scripts/trace-web.mjs; TRACE_WEB_FLAGS, e.g.
#                    "--runs 3 --mode isolated --warm")
#
# The development models (build/web-models/, random weights) stand in for a shipped model the
# tests cannot find, and give the benchmark its GPT-2-small-shaped model.

DEMO_PORT  ?= 8000
DEMO_FLAGS ?=
BENCH_WEB_FLAGS ?=
TRACE_WEB_FLAGS ?=

.PHONY: demo test-web bench-web trace-web web-models web-bundle

# The page's bundles. build/web-bundle.d, written with them, names every module they hold, so
# that a change to any of them rebuilds both (esbuild takes well under a second).
WEB_BUNDLES := web/bundle/app.mjs web/bundle/worker.mjs
web-bundle: $(WEB_BUNDLES)
all: web-bundle
$(WEB_BUNDLES) &: scripts/bundle-web.mjs dist/saccade-layout.mjs node_modules/.stamp
	node scripts/bundle-web.mjs
-include build/web-bundle.d

web-models: build/tools/make_model
	node tests/web/dev-models.mjs

# Headless Chromium for the page, the JS library's browser tests and the benchmarks: Debian's
# package, at the path they launch.
/usr/bin/chromium:
	@bash scripts/install-deps.sh chromium

demo: native wasm web-bundle
	node scripts/bundle-web.mjs --watch -- node web/serve.mjs --port $(DEMO_PORT) $(DEMO_FLAGS)

WEB_TEST_DEPS := wasm web-bundle build/tools/make_model node_modules/.stamp /usr/bin/chromium
test-web: $(WEB_TEST_DEPS)
	node --test --test-concurrency=$(TEST_JOBS) tests/web/

bench-web: wasm web-bundle build/tools/make_model node_modules/.stamp /usr/bin/chromium
	node tests/web/dev-models.mjs --large
	node scripts/bench-web.mjs $(BENCH_WEB_FLAGS)

trace-web: wasm web-bundle build/tools/make_model node_modules/.stamp /usr/bin/chromium
	node tests/web/dev-models.mjs
	node scripts/trace-web.mjs $(TRACE_WEB_FLAGS)
