// Entry of assets/python/python-runtime.js, loaded (deferred) by pages with code cells: the main-thread API
// (theme/js/python/runtime.js) with the two workers' code inside as strings, started from blob: URLs because a
// Worker cannot be created from a file:// URL. `?bundle-text`: that module bundled on its own (builder/bundle.mjs).
import workerSource from "./python/worker.js?bundle-text";
import unpackerSource from "./python/unpacker.js?bundle-text";
import { install } from "./python/runtime.js";

install(workerSource, unpackerSource);
