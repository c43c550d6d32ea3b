// The deletion machine moved to src/lifecycles/deletion.ts (issue #9 item 6);
// this re-export keeps src/controllers/ (being rewritten onto a runtime) compiling.
export * from '../../lifecycles/deletion.js';
