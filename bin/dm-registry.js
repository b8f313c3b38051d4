#!/usr/bin/env node
import '../dist/server/src/main.js';
