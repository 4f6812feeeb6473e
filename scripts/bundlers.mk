# scripts/bundlers.mk — the npm package in the bundlers web projects use (included by the
# Makefile after scripts/web.mk, whose node_modules and chromium rules it uses).
#
#   make test-bundlers   npm pack; the tarball installed offline into the sample apps of
#                        tests/bundlers/ (Vite 8, esbuild, webpack 5, from the repository's
#                        devDependencies), each built once for production and run in headless
#                        Chromium with and without COOP/COEP (tests/bundlers/bundlers.test.mjs)

.PHONY: test-bundlers

BUNDLER_TEST_DEPS := wasm node_modules/.stamp /usr/bin/chromium
test-bundlers: $(BUNDLER_TEST_DEPS)
	node --test tests/bundlers/
