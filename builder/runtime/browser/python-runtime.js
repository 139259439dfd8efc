// Entry of assets/python/python-runtime.js, loaded by pages with code cells when first needed: the main-thread
// API (runtime.js) with the worker's code inside as a string (a Worker cannot be made from a file:// URL; it
// starts from a blob: URL). `?bundle-text`: that module bundled on its own (builder/bundle.mjs).
import workerSource from "./worker.js?bundle-text";
import { install } from "./runtime.js";

install(workerSource);
