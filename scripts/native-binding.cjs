// Preloaded (NODE_OPTIONS=--require) by the runs under other Node versions
// (scripts/node-versions.mjs; docs/packaging.md, "Node versions"): better-sqlite3 loads the native
// module built for the running Node (NODE_VERSIONS_SQLITE_BINDING) instead of node_modules' one,
// built for the machine's Node. Every other native module loads unchanged.
const Module = require('node:module');

const binding = process.env.NODE_VERSIONS_SQLITE_BINDING;
const load = Module._extensions['.node'];
if (binding) {
  Module._extensions['.node'] = function loadNative(module, filename) {
    return load.call(this, module, filename.endsWith('/better_sqlite3.node') ? binding : filename);
  };
}
