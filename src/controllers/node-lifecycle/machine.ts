// The node health machine lives in src/lifecycles/node-lifecycle.ts with the
// other lifecycle machines (issue #9); this name stays for the controller's
// imports.

export * from '../../lifecycles/node-lifecycle.js';
