/**
 * The alias-bomb bound lives with the one YAML reader (document/yaml.ts); re-exported here for the
 * expansion modules that check template output.
 */
export { checkNodeBudget, DEFAULT_MAX_NODES } from '../document/yaml.js';
