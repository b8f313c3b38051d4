// nunjucks' internal modules have no type declarations; nunjucks-internals.ts gives them their
// shapes (and checks them when it loads).
declare module 'nunjucks/src/transformer.js' {
  const transformer: unknown;
  export default transformer;
}
