/**
 * The YAML writer that `formatYaml` (format.ts) imports on first use, so that commands printing no YAML never
 * load the `yaml` library. It is imported here by name, statically: `yaml` is a CommonJS package for Node,
 * and the prebuilt CLI's bundler gives an on-demand `import('yaml')` of it only a default export.
 *
 * @module
 */
export { stringify } from 'yaml';
