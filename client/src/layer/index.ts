/** Deckhand-style layered rendering (docs/layering.md): the public surface of `client/src/layer`. */
export { LAYERING_ERROR_KINDS, type LayeringErrorKind } from './errors.js';
export {
  type RenderedDocument,
  type RenderOptions,
  type RenderWarning,
  renderDocuments,
} from './render-documents.js';
export { type RenderFilesOptions, readDocumentFiles, renderFiles } from './render-files.js';
