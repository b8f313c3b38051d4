#!/usr/bin/env node
// Removes dist/ before `npm pack` builds it (`prepack`; docs/packaging.md): a module whose source
// was deleted must not stay in the package because an older build left it there.
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
